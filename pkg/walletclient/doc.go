// Package walletclient is what other services use to talk to the wallet: the
// names of its streams (its contract; formats in
// proto/pulka/wallet/v1/wallet.proto), a Client that sends a WalletCommand
// and waits for its WalletResult, and readers of an account's ledger and
// balance. The wallet's working keys (balances, holds, operation results,
// pots) are its own (services/wallet/internal/store) and are not named here.
//
// The contract:
//
//	pulka:wallet:cmd:<n>            stream  WalletCommand, n = 0..CommandShards-1 (CommandStreamForAccount, CommandStreamForTable)
//	pulka:wallet:reply:<instance>   stream  WalletResult, to the sender (ReplyStream)
//	pulka:{t:<table>}:wallet:settled stream  the table's GameSettled, once (SettledStream)
//	pulka:{w:<account>}:ledger      stream  the account's ledger in flat fields (LedgerStream, ParseLedgerEntry)
//
// An account's commands go to the shard of its id and a table's (release,
// settlement) to the shard of the table id, so that one account's commands
// are handled in order while different accounts are handled in parallel.
// See docs/wallet.md.
package walletclient

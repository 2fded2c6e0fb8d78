// Package coins is the gateway's side of the wallet (docs/wallet.md): it
// opens an account's wallet when the account registers (and again later, if
// the wallet was down then), reads balances and ledger pages from the
// wallet's ledger streams (the contract's read model, pkg/walletclient),
// claims the daily bonus, and follows the ledgers of the accounts connected
// to this gateway instance with one reader (Follower), sending each change
// to their sockets as a balance frame.
//
// Domino Coin is a virtual coin: never money, never bought or cashed out.
package coins

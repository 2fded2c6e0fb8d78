// Package store is the wallet's Redis state: its keys (spelled only here),
// one Lua script per operation, and the reads of the audit. Every key of an
// account carries the account's hash tag and every key of a table's pot the
// table's, so each script touches one Cluster slot; an operation that spans
// accounts (a settlement) is a durable record on the table's slot plus one
// idempotent step per account (docs/wallet.md explains why no coin is lost
// or doubled between the steps).
//
// Keys (a = account, t = table):
//
//	pulka:{w:a}:acct          hash    avail, held, seq, issued, collected, paid, bday
//	pulka:{w:a}:holds         hash    t → "<amount>|<forfeited 0/1>" (open holds)
//	pulka:{w:a}:ops           hash    operation id → "<digest>|<reason>|<avail>|<held>|<seq>|<da>|<dh>|<x1>|<x2>"
//	pulka:{w:a}:ledger        stream  the ledger (walletclient.LedgerStream; the contract)
//	pulka:{t:t}:wallet:pot    hash    state, game, created, digest, game_id, standings, plan, started, done
//	pulka:{t:t}:wallet:holders set    accounts that asked to hold at the table while its pot was open
package store

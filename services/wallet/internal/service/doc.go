// Package service is the wallet service: it consumes the wallet's command
// streams and scoring's final standings (consumer group "wallet"), applies
// each command through the store (one Lua script per step), answers on the
// sender's reply stream, publishes settled pots once, and runs the periodic
// reconciliation (audit), which also finishes settlements and releases that
// a crash left half done. The ledger's meaning is internal/ledger's; this
// package is the shell around it (docs/wallet.md).
package service

// Package ledger is the wallet's pure core: what a command means, whether it
// is well formed, its idempotency digest, the plan of a game's settlement
// (pkg/payout over the collected stakes), and Model, the reference model of
// the whole ledger: every command applied atomically to plain maps. The
// Redis store (internal/store) and the service that drives it
// (internal/service) must give the Model's results and balances for any
// sequence of commands, duplicates and reorderings included; the property
// tests hold them to it. No clock, no I/O: the day of a daily bonus and the
// amounts of the grants are inputs.
package ledger

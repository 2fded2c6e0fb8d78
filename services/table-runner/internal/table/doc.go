// Package table is the live table: the platform logic of one game at one
// table, which the table-runner service wraps. It turns the inputs a table
// receives — players' commands, gateways' presence reports and the runner's
// clock ticks — into the events of the table's event stream, each marked with
// who may see it.
//
// It is pure: no I/O, no clock, no goroutines, no global RNG. Time is an
// input (Input.At), deadlines are absolute instants stored in the state, and
// randomness is an input too (Input.Entropy, which the runner reads from
// crypto/rand): every hand is committed before it is dealt, dealt from its
// server seed and the players' client seeds, and revealed when it is over
// (docs/fair-play.md), so the same inputs give the same events, byte for
// byte.
//
// # What it does on top of the rules engines
//
//   - identity: a command acts for the seat its sender holds;
//   - idempotency: a command id is applied once (a bounded ring of recent ids)
//     and a command stream entry not after the last applied one is ignored;
//   - the move timer: a player who runs out of time gets one server move;
//   - bots: filled seats, and classic seats whose player left or did not come
//     back in time, are played by the baseline bot after BotDelay;
//   - reconnect grace: away players have ReconnectGrace to come back; then
//     a bot takes a classic seat and a Japanese match is forfeited;
//   - conversion of the engines' events into pulka.table.v1 events, and of
//     the finished hands into pulka.scoring.v1 inputs;
//   - views for (re)connecting clients and versioned snapshots.
//
// # The runner's loop
//
//	t, evs, err := table.New(id, gameID, settings, seats, now, entropy)   // publish evs
//	for {
//		sleep until t.NextDeadline(), or until an input arrives
//		input.Entropy = 32 bytes of crypto/rand
//		evs, err := t.Apply(input)    // publish evs (even when err != nil), log ForLog(input, evs)
//		publish t.ScoringInputs(evs) to scoring
//	}
//
// Apply changes the state if and only if it returns events, so the event
// stream (each entry carrying the Input that caused it, see MarshalInput) is
// a complete log: a snapshot plus the inputs logged after it rebuild exactly
// the same table. docs/table.md describes the decisions in detail.
package table

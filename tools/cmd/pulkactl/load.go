package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/tools/wsclient"
)

const loadHelp = `usage: pulkactl load [--server URL] [--tables N] [--mode throughput|paced] [--rate R] [--duration D]

Load-tests a running Pulka through its public edge: creates N tables with a
client on every seat, each over its own WebSocket (classic: four clients;
--bots: one client and three bots; --game japanese: two clients), and plays
legal moves (the baseline of pulkactl play --auto) until --duration has passed
after the warm-up. --bot-level chooses the bots' level (issue 23: measure
the runner with --bot-level strong). A finished game is followed by a new table.
With --stake N the tables are Domino Coin tables of N coins: every client
registers an account (the gateway opens its wallet) instead of playing as a
guest, and the run also reports game end → balances updated: from the first
client's GameEnded to the balance frame that completes the table's settlement
(every seat's stake settled and the whole pot paid out), by the frames' arrival.

  throughput  every client moves as soon as the events say it is its turn
  paced       open loop: each table gets a move slot every 1/R seconds, on a
              schedule that does not wait for answers; a move counts from its
              slot (a late answer delays the next move but not the clock)

It prints the moves per second whose events reached every client of the table,
and the latency from a client's command (or its slot) to the moment the last
client of the table received an event caused by it (matched by command id and
caused_by). In paced mode a move whose command left the generator more than
--late-after after its slot was late: the generator, not the servers, set its
latency. When more than 1 % of the window's moves were late the run says so and
reports no latency (pin the generator to a core of its own: scripts/loadrun.sh
with LOADRUN_PIN). Only loopback servers should be targeted.

flags:
`

type loadFlags struct {
	server, mode, game        string
	tables, setupConcurrency  int
	rate                      float64
	duration, warmup, timeout time.Duration
	bots                      bool
	botLevel                  string // "" (the server's default), easy, normal or strong
	stake                     int64
	cpuProfile                string
	trace                     string
	stages                    string // host:port of the span sink, or ""
	traceFor                  time.Duration
	timeline                  time.Duration
	stagger                   time.Duration
	lateAfter                 time.Duration
}

// maxLateShare is the share of a paced window's moves that may leave the
// generator late before the run's latency says more about the generator
// than about the servers (issue 24).
const maxLateShare = 0.01

func runLoad(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	var f loadFlags
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.server, "server", "http://localhost:8080", "the gateway's address")
	fs.IntVar(&f.tables, "tables", 10, "tables played at once")
	fs.StringVar(&f.mode, "mode", "throughput", "throughput or paced")
	fs.Float64Var(&f.rate, "rate", 1, "paced: moves per second per table")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "how long to measure")
	fs.DurationVar(&f.warmup, "warmup", 2*time.Second, "how long to play before measuring")
	fs.StringVar(&f.game, "game", "classic", "classic or japanese")
	fs.BoolVar(&f.bots, "bots", false, "classic: one client and three bots per table")
	fs.StringVar(&f.botLevel, "bot-level", "", "with --bots: the tables' bot level, easy, normal or strong (default: the server's)")
	fs.Int64Var(&f.stake, "stake", 0, "Domino Coin tables of this stake (a rung of the lobby's ladder); 0: free tables")
	fs.IntVar(&f.setupConcurrency, "setup-concurrency", 16, "tables set up at once")
	fs.DurationVar(&f.timeout, "setup-timeout", 5*time.Minute, "how long setting up the tables may take")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write the load generator's own CPU profile of the measured window to this file")
	fs.StringVar(&f.trace, "trace", "", "write a runtime execution trace of the load generator to this file, over the first --trace-for of the measured window (go tool trace -pprof=sched FILE: where its goroutines waited to run)")
	fs.DurationVar(&f.traceFor, "trace-for", 3*time.Second, "how much of the measured window --trace records (a trace of thousands of connections grows fast)")
	fs.DurationVar(&f.stagger, "stagger", 0, "paced: each table's first move comes at a random moment within this (default: within the first 1/rate), so that tables are not all at the same point of their games (a hand's end is a burst of work)")
	fs.DurationVar(&f.lateAfter, "late-after", time.Millisecond, "paced: a move whose command left the generator more than this after its slot was late; over 1 % late moves and the run reports no latency")
	fs.StringVar(&f.stages, "stages", "", "listen on this host:port for the services' spans (OTLP/HTTP) and split the sampled moves' latency by stage: gateway in, to the runner, runner, to the gateway, gateway out (run the services with OTEL_EXPORTER_OTLP_ENDPOINT=http://ADDR and a sampler, e.g. OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.05; scripts/loadrun.sh: LOADRUN_STAGES=0.05)")
	fs.DurationVar(&f.timeline, "timeline", 0, "also print the latency quantiles of each such slice of the window (e.g. 1s), by the moves' start: is the tail steady or a few bad seconds?")
	fs.Usage = func() {
		_, _ = io.WriteString(fs.Output(), loadHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &ExitError{Code: exitUsage}
	}
	switch {
	case fs.NArg() > 0:
		return usageError(fmt.Errorf("load: unexpected arguments %q", fs.Args()))
	case f.tables < 1 || f.tables > 10000:
		return usageError(errors.New("load: --tables must be 1..10000"))
	case f.mode != "throughput" && f.mode != "paced":
		return usageError(fmt.Errorf("load: --mode %q: throughput or paced", f.mode))
	case f.mode == "paced" && (f.rate <= 0 || f.rate > 50):
		return usageError(errors.New("load: --rate must be in (0, 50] moves per second per table"))
	case f.duration <= 0 || f.duration > time.Hour || f.warmup < 0:
		return usageError(errors.New("load: --duration must be in (0, 1h] and --warmup not negative"))
	case f.game != "classic" && f.game != "japanese":
		return usageError(fmt.Errorf("load: --game %q: classic or japanese", f.game))
	case f.bots && f.game != "classic":
		return usageError(errors.New("load: --bots is for classic tables"))
	case f.botLevel != "" && !f.bots:
		return usageError(errors.New("load: --bot-level needs --bots"))
	case f.botLevel != "" && botLevels[f.botLevel] == lobbyv1.BotLevel_BOT_LEVEL_UNSPECIFIED:
		return usageError(fmt.Errorf("load: --bot-level %q: easy, normal or strong", f.botLevel))
	case f.stake < 0 || (f.stake > 0 && f.bots):
		return usageError(errors.New("load: --stake must not be negative, and coin tables have no bots (drop --bots)"))
	case f.setupConcurrency < 1:
		return usageError(errors.New("load: --setup-concurrency must be at least 1"))
	case f.timeline < 0:
		return usageError(errors.New("load: --timeline must not be negative"))
	case f.traceFor <= 0:
		return usageError(errors.New("load: --trace-for must be positive"))
	case f.lateAfter <= 0:
		return usageError(errors.New("load: --late-after must be positive"))
	case f.stagger < 0 || (f.stagger > 0 && f.mode != "paced"):
		return usageError(errors.New("load: --stagger is for --mode paced, and not negative"))
	}
	res, err := runLoadTest(ctx, f, stderr)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	fmt.Fprint(stdout, res.String())
	return nil
}

// loadResult is what one load run measured.
type loadResult struct {
	mode                      string
	stagger                   time.Duration
	tables, clients           int
	rate                      float64
	setup, window             time.Duration
	moves                     int
	latencies                 []time.Duration // sorted
	lags                      []time.Duration // sorted: slot to command written (paced)
	lateAfter                 time.Duration   // a lag beyond it is a late move
	spreads                   []time.Duration // sorted: first client's event to the last's
	timeline                  []timeSlice     // with --timeline
	stages                    *stageReport    // with --stages
	rejected, refused, reconn int64
	// seedsRefused counts client seeds that came after their hand was
	// dealt (its seed deadline passed): the hand was dealt without them.
	seedsRefused             int64
	games, failed, lateSlots int64
	firstError               string
	// refusals is the gateway's error frames by code, e.g. "rate_limited 3".
	refusals string
	// settled is game end → balances updated at coin tables (sorted), and
	// unsettled the coin games of the window whose settlement no client
	// saw complete before the run ended.
	settled   []time.Duration
	unsettled int
	stake     int64
}

// late counts the paced window's moves that left the generator more than
// lateAfter after their slot, and their share of the moves.
func (r *loadResult) late() (int, float64) {
	if r.mode != "paced" || len(r.lags) == 0 || r.lateAfter <= 0 {
		return 0, 0
	}
	// lags is sorted: the late ones are its tail.
	n := len(r.lags) - sort.Search(len(r.lags), func(i int) bool { return r.lags[i] > r.lateAfter })
	return n, float64(n) / float64(len(r.lags))
}

func (r *loadResult) movesPerSecond() float64 { return float64(r.moves) / r.window.Seconds() }

// quantile is the q-quantile of the latencies (nearest rank).
func (r *loadResult) quantile(q float64) time.Duration { return quantile(r.latencies, q) }

// quantile is the q-quantile of sorted latencies (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// timeSlice is the moves that started in [from, from+step) of the window.
type timeSlice struct {
	from      time.Duration
	latencies []time.Duration // sorted
}

// timeSlices groups the latencies by their moves' start within the window.
func timeSlices(starts []time.Duration, latencies []time.Duration, step time.Duration) []timeSlice {
	var out []timeSlice
	for i, at := range starts {
		k := int(at / step)
		for len(out) <= k {
			out = append(out, timeSlice{from: time.Duration(len(out)) * step})
		}
		out[k].latencies = append(out[k].latencies, latencies[i])
	}
	for _, sl := range out {
		slices.Sort(sl.latencies)
	}
	return out
}

// msString prints d in milliseconds to the microsecond.
func msString(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64) + " ms"
}

// tailString prints the quantiles of sorted durations.
func tailString(d []time.Duration) string {
	return fmt.Sprintf("p50 %s  p99 %s  p99.9 %s  max %s", msString(quantile(d, 0.50)), msString(quantile(d, 0.99)), msString(quantile(d, 0.999)), msString(quantile(d, 1)))
}

func (r *loadResult) String() string {
	s := fmt.Sprintf("load: %s, %d tables, %d clients", r.mode, r.tables, r.clients)
	if r.mode == "paced" {
		s += fmt.Sprintf(", %.3g move/s per table", r.rate)
		if r.stagger > 0 {
			s += fmt.Sprintf(" (first moves staggered over %s)", r.stagger)
		}
	}
	s += fmt.Sprintf(", set up in %.1fs, measured %.1fs\n", r.setup.Seconds(), r.window.Seconds())
	s += fmt.Sprintf("moves: %d, %.0f moves/s end to end\n", r.moves, r.movesPerSecond())
	late, lateShare := r.late()
	trusted := lateShare <= maxLateShare
	if trusted {
		s += fmt.Sprintf("latency command → last client's event: %s  (n=%d)\n", tailString(r.latencies), len(r.latencies))
	} else {
		s += fmt.Sprintf("latency not reported: the generator sent %d of %d moves (%.1f %%) more than %s after their slot, over the %.0f %% a trusted run allows; it, not the servers, set the pace (pin it to its own core: LOADRUN_PIN)\n",
			late, len(r.lags), 100*lateShare, r.lateAfter, 100*maxLateShare)
	}
	s += fmt.Sprintf("refused moves %d, gateway refusals %d, reconnects %d, games finished %d, tables failed %d",
		r.rejected, r.refused, r.reconn, r.games, r.failed)
	if r.mode == "paced" {
		s += fmt.Sprintf(", moves sent after their slot %d", r.lateSlots)
	}
	s += fmt.Sprintf(", late client seeds %d\n", r.seedsRefused)
	if r.refusals != "" {
		s += "gateway refusals by code: " + r.refusals + "\n"
	}
	if r.mode == "paced" && len(r.lags) > 0 {
		// The generator shares the machine: how much of the latency is its
		// own, before the command left it, tells a busy client from a slow
		// server.
		s += "of which slot → command written (the generator's own delay): " + tailString(r.lags) + "\n"
	}
	if len(r.spreads) > 0 && trusted {
		s += "of which first client's event → last client's event (the fan-out): " + tailString(r.spreads) + "\n"
	}
	if r.stake > 0 {
		s += fmt.Sprintf("coin tables of %d: game end → balances updated: ", r.stake)
		if len(r.settled) > 0 {
			s += tailString(r.settled)
		} else {
			s += "none completed"
		}
		s += fmt.Sprintf("  (n=%d)", len(r.settled))
		s += fmt.Sprintf(", %d games of the window not seen settled\n", r.unsettled)
	}
	for _, sl := range r.timeline {
		if !trusted {
			break
		}
		s += fmt.Sprintf("  t+%-6s moves %5d  p50 %s  p99 %s  max %s\n", sl.from.String(), len(sl.latencies),
			msString(quantile(sl.latencies, 0.50)), msString(quantile(sl.latencies, 0.99)), msString(quantile(sl.latencies, 1)))
	}
	if r.stages != nil {
		s += r.stages.String()
	}
	if r.firstError != "" {
		s += "first error: " + r.firstError + "\n"
	}
	return s
}

// recorder matches commands to the events they cause.
type recorder struct {
	mu         sync.Mutex
	pending    map[string]*inflight
	start, end time.Time // the measured window
	latencies  []time.Duration
	starts     []time.Duration // each latency's move start, from the window's start
	lags       []time.Duration // each latency's part before its command was written
	spreads    []time.Duration // each latency's part from the first client's event to the last's
	moves      int
	firstError string
	refusals   map[string]int // gateway refusals by error code

	rejected, refused, reconn, games, failed, lateSlots, seedsRefused atomic.Int64

	// coin tables (--stake): the settlement of each table whose game ended,
	// and the measured game end → balances updated.
	settling map[string]*settlement
	settled  []time.Duration
}

// settlement is what the clients of one coin table saw of its game's end
// and its settlement: the wallet writes one ledger entry per seat for its
// stake (STAKE_SETTLED) and one per share paid (PAYOUT), each reaching the
// account's sockets as a balance frame.
type settlement struct {
	ended       time.Time // the first client's GameEnded (zero: none seen yet)
	seats, pot  int64
	stakes      int64 // STAKE_SETTLED entries seen
	paid        int64 // coins of the PAYOUT entries seen
	last        time.Time
	done, count bool            // count: the game ended within the window
	entries     map[string]bool // ledger entries counted (a reconnect sends the last one again)
}

// coinTable registers a coin table of seats players each staking stake.
func (r *recorder) coinTable(table string, seats, stake int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.settling == nil {
		r.settling = map[string]*settlement{}
	}
	r.settling[table] = &settlement{seats: seats, pot: seats * stake, entries: map[string]bool{}}
}

// gameEnded records a client's GameEnded at a coin table.
func (r *recorder) gameEnded(table string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.settling[table]
	if st == nil {
		return
	}
	if st.ended.IsZero() || at.Before(st.ended) {
		st.ended = at
	}
	st.count = !r.start.IsZero() && !st.ended.Before(r.start) && (r.end.IsZero() || st.ended.Before(r.end))
	r.settle(st)
}

// balance records a client's balance frame.
func (r *recorder) balance(b *gatewayv1.BalanceFrame, at time.Time) {
	e := b.GetEntry()
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.settling[e.GetTableId()]
	if st == nil || st.entries[e.GetEntryId()] {
		return
	}
	st.entries[e.GetEntryId()] = true
	switch e.GetKind() {
	case walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_STAKE_SETTLED:
		st.stakes++
	case walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_PAYOUT:
		st.paid += e.GetAvailableDelta()
	default:
		return
	}
	if at.After(st.last) {
		st.last = at
	}
	r.settle(st)
}

// settle records st's latency once its game has ended and every stake is
// settled and the whole pot paid; r.mu held.
func (r *recorder) settle(st *settlement) {
	if st.done || st.ended.IsZero() || st.stakes < st.seats || st.paid < st.pot {
		return
	}
	st.done = true
	if st.count {
		r.settled = append(r.settled, st.last.Sub(st.ended))
	}
}

// unsettled counts the coin games that ended within the window and were not
// seen settled; r.mu held.
func (r *recorder) unsettled() int {
	n := 0
	for _, st := range r.settling {
		if st.count && !st.done {
			n++
		}
	}
	return n
}

type inflight struct {
	at    time.Time
	lag   time.Duration // from at to the command's send: the generator's own delay
	first time.Time     // when the first client saw an event caused by it
	need  int           // clients that must see an event caused by it
	got   int
}

func newRecorder() *recorder { return &recorder{pending: map[string]*inflight{}} }

func (r *recorder) sent(id string, at time.Time, clients int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.pending[id]; !ok { // a resend keeps the first instant
		r.pending[id] = &inflight{at: at, lag: max(time.Since(at), 0), need: clients}
	}
}

// refusedCode counts a gateway refusal by its code, for the report.
func (r *recorder) refusedCode(err error) {
	code := "unknown"
	var we *wire.Error
	if errors.As(err, &we) {
		code = we.Code
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refusals == nil {
		r.refusals = map[string]int{}
	}
	r.refusals[code]++
}

// refusalCodes lists the gateway refusals by code, most frequent first.
// The caller holds r.mu.
func (r *recorder) refusalCodes() string {
	codes := make([]string, 0, len(r.refusals))
	for c := range r.refusals {
		codes = append(codes, c)
	}
	sort.Slice(codes, func(i, j int) bool { return r.refusals[codes[i]] > r.refusals[codes[j]] })
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%s %d", c, r.refusals[c])
	}
	return strings.Join(parts, ", ")
}

// refusedMove reports whether id is a move this generator sent (and still
// waited for), and forgets it: a refused move causes no event.
func (r *recorder) refusedMove(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.pending[id]
	delete(r.pending, id)
	return ok
}

// seen records that one client received the first event caused by id.
func (r *recorder) seen(id string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.pending[id]
	if !ok {
		return
	}
	p.got++
	if p.got == 1 {
		p.first = at
	}
	if p.got < p.need {
		return
	}
	delete(r.pending, id)
	if !r.start.IsZero() && !p.at.Before(r.start) && (r.end.IsZero() || at.Before(r.end)) {
		r.moves++
		r.latencies = append(r.latencies, at.Sub(p.at))
		r.starts = append(r.starts, p.at.Sub(r.start))
		r.lags = append(r.lags, p.lag)
		r.spreads = append(r.spreads, at.Sub(p.first))
	}
}

func (r *recorder) fail(err error) {
	r.failed.Add(1)
	r.mu.Lock()
	if r.firstError == "" {
		r.firstError = err.Error()
	}
	r.mu.Unlock()
}

// seatPlayer is one client of a load table.
type seatPlayer struct {
	api  *wsclient.API
	conn *wsclient.Conn
}

func runLoadTest(ctx context.Context, f loadFlags, progress io.Writer) (*loadResult, error) {
	clients := 4
	switch {
	case f.game == "japanese":
		clients = 2
	case f.bots:
		clients = 1
	}
	var sink *stageSink
	if f.stages != "" {
		var err error
		if sink, err = listenStages(f.stages); err != nil {
			return nil, err
		}
		defer func() {
			closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = sink.Close(closeCtx)
		}()
	}
	rec := newRecorder()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var clock *slotClock // paced: every table's slots
	if f.mode == "paced" {
		clock = newSlotClock(runCtx, func() { rec.lateSlots.Add(1) })
	}

	// Set up every table's clients (sessions and WebSockets) first, bounded.
	began := time.Now()
	setupCtx, cancelSetup := context.WithTimeout(ctx, f.timeout)
	defer cancelSetup()
	groups := make([][]seatPlayer, f.tables)
	// The clients of a table get the same bytes for every public event:
	// decoded once, they leave the machine's CPU to the services measured.
	frames := wsclient.NewFrameCache(4096)
	var setupErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, f.setupConcurrency)
	for i := range groups {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			g, err := connectGroup(setupCtx, f.server, clients, frames, f.stake > 0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && setupErr == nil {
				setupErr = err
			}
			groups[i] = g
		}()
	}
	wg.Wait()
	defer func() {
		for _, g := range groups {
			for _, p := range g {
				if p.conn != nil {
					_ = p.conn.Close()
				}
			}
		}
	}()
	if setupErr != nil {
		return nil, fmt.Errorf("setting up clients: %w", setupErr)
	}
	fmt.Fprintf(progress, "load: %d clients connected in %.1fs; opening the tables\n", f.tables*clients, time.Since(began).Seconds())

	// The warm-up starts once every group has its first table open and
	// joined: creating, sitting at and joining 1,000 tables is work of its
	// own (the lobby's, the replays'), which the window must not measure.
	var tablesWG, opened sync.WaitGroup
	opened.Add(len(groups))
	for i, g := range groups {
		tablesWG.Add(1)
		go func() {
			defer tablesWG.Done()
			playTables(runCtx, f, clock, i, g, rec, sync.OnceFunc(opened.Done))
		}()
	}
	allOpen := make(chan struct{})
	go func() { opened.Wait(); close(allOpen) }()
	select {
	case <-allOpen:
	case <-ctx.Done():
	}
	setup := time.Since(began)
	fmt.Fprintf(progress, "load: %d tables open and joined in %.1fs; playing\n", f.tables, setup.Seconds())
	sleepCtx(ctx, f.warmup)
	rec.mu.Lock()
	rec.start = time.Now()
	rec.mu.Unlock()
	stopProfile, err := startCPUProfile(f.cpuProfile)
	if err != nil {
		return nil, err
	}
	stopTrace, err := startTrace(f.trace)
	if err != nil {
		stopProfile()
		return nil, err
	}
	sleepCtx(ctx, min(f.traceFor, f.duration))
	stopTrace()
	sleepCtx(ctx, f.duration-min(f.traceFor, f.duration))
	stopProfile()
	rec.mu.Lock()
	rec.end = time.Now()
	window := rec.end.Sub(rec.start)
	rec.mu.Unlock()
	stop()
	tablesWG.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	var stages *stageReport
	if sink != nil {
		// The services export what they sampled in batches (every
		// OTEL_BSP_SCHEDULE_DELAY): the window's last moves come after it.
		sink.settle(ctx, time.Second, 15*time.Second)
		stages = sink.report(rec.start, rec.end)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var timeline []timeSlice
	if f.timeline > 0 {
		timeline = timeSlices(rec.starts, rec.latencies, f.timeline)
	}
	sorted := func(d []time.Duration) []time.Duration {
		d = slices.Clone(d)
		slices.Sort(d)
		return d
	}
	lat := sorted(rec.latencies)
	return &loadResult{stages: stages, lags: sorted(rec.lags), lateAfter: f.lateAfter, spreads: sorted(rec.spreads), timeline: timeline, stagger: f.stagger, mode: f.mode, tables: f.tables, clients: f.tables * clients, rate: f.rate, setup: setup,
		window: window, moves: rec.moves, latencies: lat, rejected: rec.rejected.Load(), refused: rec.refused.Load(), seedsRefused: rec.seedsRefused.Load(), refusals: rec.refusalCodes(),
		reconn: rec.reconn.Load(), games: rec.games.Load(), failed: rec.failed.Load(), lateSlots: rec.lateSlots.Load(),
		firstError: rec.firstError, stake: f.stake, settled: sorted(rec.settled), unsettled: rec.unsettled()}, nil
}

// connectGroup makes the sessions and WebSockets of one table: guests, or
// with accounts registered accounts whose wallets are open.
func connectGroup(ctx context.Context, server string, clients int, frames *wsclient.FrameCache, accounts bool) ([]seatPlayer, error) {
	g := make([]seatPlayer, clients)
	for i := range g {
		api := &wsclient.API{Server: server}
		var s wsclient.Session
		var err error
		if accounts {
			s, err = registerWithWallet(ctx, api)
		} else {
			s, err = api.Guest(ctx)
		}
		if err != nil {
			return g, fmt.Errorf("session: %w", err)
		}
		api.Token = s.Token
		c, err := wsclient.Dial(ctx, server, wsclient.Options{Token: s.Token, Reconnect: true, Buffer: 1024, Frames: frames})
		if err != nil {
			return g, err
		}
		g[i] = seatPlayer{api: api, conn: c}
	}
	return g, nil
}

// registerWithWallet registers a new account and waits until the gateway
// has opened its Domino Coin wallet (it asks the wallet at registration).
func registerWithWallet(ctx context.Context, api *wsclient.API) (wsclient.Session, error) {
	s, err := api.Register(ctx, "load-"+wsclient.NewKey()[:16], "load-"+wsclient.NewKey())
	if err != nil {
		return s, fmt.Errorf("register: %w", err)
	}
	api.Token = s.Token
	for {
		_, err := api.Balance(ctx)
		if err == nil {
			return s, nil
		}
		var ae *wsclient.APIError
		if !errors.As(err, &ae) || ae.Code != "wallet_opening" {
			return s, fmt.Errorf("wallet: %w", err)
		}
		if err := sleepCtxErr(ctx, 50*time.Millisecond); err != nil {
			return s, err
		}
	}
}

// playTables plays games at new tables with one group of clients until ctx
// ends. It calls opened once its first table is open and every client has
// joined it (or it gives up before).
func playTables(ctx context.Context, f loadFlags, clock *slotClock, idx int, g []seatPlayer, rec *recorder, opened func()) {
	defer opened()
	for n := 0; ctx.Err() == nil; n++ {
		table, err := openTable(ctx, f, g, fmt.Sprintf("load %d.%d", idx, n))
		if err != nil {
			if ctx.Err() == nil {
				rec.fail(err)
			}
			return
		}
		if f.stake > 0 {
			rec.coinTable(table, int64(len(g)), f.stake)
		}
		err = playGame(ctx, f, clock, g, table, rec, opened)
		if ctx.Err() != nil {
			return // stopped mid-game: not a finished game
		}
		if err != nil {
			rec.fail(err)
			return
		}
		rec.games.Add(1)
		for _, p := range g {
			_, _ = p.conn.Unjoin(ctx, table)
		}
	}
}

// botLevels are --bot-level's words; the wire's levels are pkg/classic's.
var botLevels = map[string]lobbyv1.BotLevel{
	"easy": lobbyv1.BotLevel_BOT_LEVEL_EASY, "normal": lobbyv1.BotLevel_BOT_LEVEL_NORMAL,
	"strong": lobbyv1.BotLevel_BOT_LEVEL_STRONG,
}

// openTable creates a table with the first client and seats the others (or
// bots), which starts the game.
func openTable(ctx context.Context, f loadFlags, g []seatPlayer, name string) (string, error) {
	settings := wsclient.ClassicSettings()
	settings.BotLevel = botLevels[f.botLevel]
	if f.game == "japanese" {
		settings = wsclient.JapaneseSettings(11)
	}
	if f.stake > 0 {
		settings.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: f.stake}}}
	}
	id, err := g[0].api.CreateTable(ctx, wsclient.CreateTable{Name: name, Settings: settings, SitDown: true}, wsclient.NewKey())
	if err != nil {
		return "", fmt.Errorf("create table: %w", err)
	}
	if f.bots {
		if err := g[0].api.FillBots(ctx, id, wsclient.NewKey()); err != nil {
			return "", fmt.Errorf("fill bots: %w", err)
		}
	}
	for s := 1; s < len(g); s++ {
		if err := g[s].api.Sit(ctx, id, s, "", wsclient.NewKey()); err != nil {
			return "", fmt.Errorf("sit at seat %d: %w", s, err)
		}
	}
	return id, nil
}

// playGame runs a Player per client until the game ends; joined is called
// when every client has joined the table.
func playGame(ctx context.Context, f loadFlags, clock *slotClock, g []seatPlayer, table string, rec *recorder, joined func()) error {
	var joins atomic.Int32
	gameCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var slots <-chan time.Time
	if clock != nil {
		slots = clock.table(gameCtx, f.rate, f.stagger)
	}
	errs := make(chan error, len(g))
	for _, p := range g {
		lastCause := ""
		pl := &wsclient.Player{Conn: p.conn, Table: table,
			OnSend: func(id string, _ wsclient.Move, at time.Time) { rec.sent(id, at, len(g)) },
			OnFrame: func(fr wsclient.Frame) {
				switch fr.Type {
				case wire.TypeEvent:
					if fr.Table != table {
						return
					}
					if cb := fr.Event.GetCausedBy(); cb != "" && cb != lastCause {
						lastCause = cb
						rec.seen(cb, fr.At)
					}
					if fr.Event.GetGameEnded() != nil {
						rec.gameEnded(table, fr.At)
					}
					if r := fr.Event.GetMoveRejected(); r != nil {
						// Only this generator's moves are moves: the
						// client seeds the connection sends by itself
						// may come after a hand's seed deadline.
						if rec.refusedMove(fr.Event.GetCausedBy()) {
							rec.rejected.Add(1)
						} else {
							rec.seedsRefused.Add(1)
						}
					}
				case wire.TypeJoined:
					if fr.Table == table && joins.Add(1) == int32(len(g)) {
						joined()
					}
				case wire.TypeError:
					rec.refused.Add(1)
					rec.refusedCode(fr.Err)
				case wsclient.TypeReconnected:
					rec.reconn.Add(1)
				case wire.TypeBalance:
					// The settlement of the table before this one (its
					// frames come after its game's end) or of this one.
					rec.balance(fr.Balance, fr.At)
				}
			}}
		if slots != nil {
			pl.BeforeMove = func(ctx context.Context) (time.Time, error) {
				select {
				case at := <-slots:
					if time.Since(at) > 50*time.Millisecond {
						rec.lateSlots.Add(1)
					}
					return at, nil
				case <-ctx.Done():
					return time.Time{}, ctx.Err()
				}
			}
		}
		go func() {
			err := pl.Run(gameCtx)
			if err != nil {
				cancel() // one client failing ends the table
			}
			errs <- err
		}()
	}
	var first error
	for range g {
		if err := <-errs; err != nil && first == nil && !errors.Is(err, context.Canceled) {
			first = err
		}
	}
	return first
}

// sleepCtxErr sleeps d, or returns ctx's error if it ends first.
func sleepCtxErr(ctx context.Context, d time.Duration) error {
	sleepCtx(ctx, d)
	return ctx.Err()
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// startTrace records this process's execution trace into path ("" does
// nothing): what ran on the generator's P while a slot waited.
func startTrace(path string) (stop func(), err error) {
	return startRecording(path, "trace", trace.Start, trace.Stop)
}

// startCPUProfile profiles this process into path ("" does nothing): the
// load generator shares the machine with the services, so its own cost is
// part of every measurement.
func startCPUProfile(path string) (stop func(), err error) {
	return startRecording(path, "cpu profile", pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// startRecording starts one of the runtime's recorders (start, stop) into
// the file path; "" records nothing.
func startRecording(path, what string, start func(io.Writer) error, stop func()) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	out, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := start(out); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return func() {
		stop()
		_ = out.Close()
	}, nil
}

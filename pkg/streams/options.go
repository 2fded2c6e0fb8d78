package streams

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Option configures a Publisher, Consumer or Tailer. Options that do not
// concern the value being built are ignored by it.
type Option func(*settings)

type settings struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	propagator     propagation.TextMapPropagator
	logger         *slog.Logger

	// publishing
	maxLen     int64
	retention  func(stream string) int64
	entryBells bool

	// reading
	batchKeys    int
	count        int64
	block        time.Duration
	workers      int
	orderKey     func(Message) string
	maxInFlight  int
	startID      string
	pollInterval time.Duration
	sweepEvery   time.Duration
	notices      NoticeHandler

	// consumer groups
	minIdle         time.Duration
	claimInterval   time.Duration
	claimCount      int64
	maxDeliveries   int64
	deadLetter      string
	deadLetterLen   int64
	consumerGCIdle  time.Duration
	consumerGCEvery time.Duration
	lagEvery        time.Duration
	shutdownGrace   time.Duration
	backoffMin      time.Duration
	backoffMax      time.Duration
}

// Defaults. The reclaim idle time is seconds, not minutes: a table whose
// runner died must move on quickly, and handlers are short.
const (
	DefaultMaxLen          = 10_000
	DefaultBatchKeys       = 1000
	DefaultCount           = 256
	DefaultBlock           = 2 * time.Second
	DefaultWorkers         = 8
	DefaultMaxInFlight     = 4096
	DefaultMinIdle         = 5 * time.Second
	DefaultClaimInterval   = time.Second
	DefaultClaimCount      = 100
	DefaultMaxDeliveries   = 5
	DefaultDeadLetterLen   = 100_000
	DefaultConsumerGCIdle  = 10 * time.Minute
	DefaultConsumerGCEvery = time.Minute
	DefaultLagEvery        = 15 * time.Second
	DefaultShutdownGrace   = 10 * time.Second
	DefaultPollInterval    = 50 * time.Millisecond
	DefaultSweepInterval   = time.Second
)

func newSettings(opts []Option) settings {
	s := settings{
		tracerProvider:  tracenoop.NewTracerProvider(),
		meterProvider:   metricnoop.NewMeterProvider(),
		propagator:      propagation.TraceContext{},
		logger:          slog.New(slog.DiscardHandler),
		maxLen:          DefaultMaxLen,
		batchKeys:       DefaultBatchKeys,
		count:           DefaultCount,
		block:           DefaultBlock,
		workers:         DefaultWorkers,
		maxInFlight:     DefaultMaxInFlight,
		startID:         "0",
		pollInterval:    DefaultPollInterval,
		sweepEvery:      DefaultSweepInterval,
		minIdle:         DefaultMinIdle,
		claimInterval:   DefaultClaimInterval,
		claimCount:      DefaultClaimCount,
		maxDeliveries:   DefaultMaxDeliveries,
		deadLetterLen:   DefaultDeadLetterLen,
		consumerGCIdle:  DefaultConsumerGCIdle,
		consumerGCEvery: DefaultConsumerGCEvery,
		lagEvery:        DefaultLagEvery,
		shutdownGrace:   DefaultShutdownGrace,
		backoffMin:      50 * time.Millisecond,
		backoffMax:      2 * time.Second,
	}
	for _, o := range opts {
		o(&s)
	}
	return s
}

// WithTracerProvider sets where spans go (default: a no-op provider; the
// trace context of the caller is still propagated through entries).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(s *settings) {
		if tp != nil {
			s.tracerProvider = tp
		}
	}
}

// WithMeterProvider sets where metrics go (default: no-op).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(s *settings) {
		if mp != nil {
			s.meterProvider = mp
		}
	}
}

// WithPropagator replaces the W3C trace-context propagator.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(s *settings) {
		if p != nil {
			s.propagator = p
		}
	}
}

// WithLogger sets the logger for errors the loops recover from (default:
// discard).
func WithLogger(l *slog.Logger) Option {
	return func(s *settings) {
		if l != nil {
			s.logger = l
		}
	}
}

// WithMaxLen sets the approximate MAXLEN every publish trims its stream to
// (0: no trimming). Default DefaultMaxLen.
func WithMaxLen(n int64) Option { return func(s *settings) { s.maxLen = n } }

// WithRetention decides MAXLEN per stream (e.g. by StreamClass); it overrides
// WithMaxLen. Return 0 for no trimming.
func WithRetention(f func(stream string) int64) Option {
	return func(s *settings) { s.retention = f }
}

// WithEntryBells makes a Publisher ring bells that carry the entry (see
// Bell), so a Tailer following the stream need not read it back: one round
// trip less per entry for each Tailer, at ≈ 3 µs more of Redis per entry
// (a Lua script per flush, and the stream's last ID read in it). For
// publishers of streams that Tailers follow (a table's commands and events);
// consumer-group streams gain nothing from it. Default off: a bare bell.
func WithEntryBells() Option { return func(s *settings) { s.entryBells = true } }

// WithNotices makes a Tailer hand the notices rung on the bells of the
// streams it follows (NoticeBell) to h, on the goroutine that listens to the
// bells: h must be quick. Without it notices are dropped. A notice is not an
// entry: it is not read back, not ordered with the stream's entries, and lost
// when nobody listens at the moment it is rung.
func WithNotices(h NoticeHandler) Option { return func(s *settings) { s.notices = h } }

// WithBatchKeys sets how many streams one XREADGROUP/XREAD call names.
// Each batch is served by one goroutine and one (blocking) connection, so a
// consumer of N streams uses ceil(N/batchKeys) connections for reading: size
// the client's PoolSize accordingly.
func WithBatchKeys(n int) Option {
	return func(s *settings) {
		if n > 0 {
			s.batchKeys = n
		}
	}
}

// WithCount sets the COUNT of each read (entries per stream per call).
func WithCount(n int64) Option {
	return func(s *settings) {
		if n > 0 {
			s.count = n
		}
	}
}

// WithBlock sets how long one Consumer read blocks when there is nothing to
// read. Add, Remove and shutdown wake a blocked read at once, so this only
// bounds how often an idle consumer polls. (A Tailer does not block: it reads
// when a bell rings; see WithSweepInterval.)
func WithBlock(d time.Duration) Option {
	return func(s *settings) {
		if d > 0 {
			s.block = d
		}
	}
}

// WithWorkers sets how many handlers run at once. Messages of one stream
// (or of one order key: WithOrderKey) always go to the same worker, so they
// are handled in stream order.
func WithWorkers(n int) Option {
	return func(s *settings) {
		if n > 0 {
			s.workers = n
		}
	}
}

// WithOrderKey makes a Consumer order messages by key(m) instead of by
// stream: messages with the same key go to the same worker and are handled
// in stream order, messages with different keys run in parallel on the
// other workers. It is for a stream whose entries are about independent
// subjects — one stream of every table's inputs, say — which by stream
// would be handled one at a time, each message waiting for every handler
// before it whatever its subject. key runs on the reading goroutine, so it
// must be quick (a header field, or one field of the payload); a message
// whose key it cannot tell may return its stream. Acknowledgements and
// reclaims work by message ID, so handlers finishing out of stream order
// changes nothing else.
func WithOrderKey(key func(m Message) string) Option {
	return func(s *settings) { s.orderKey = key }
}

// WithMaxInFlight bounds read-but-unacknowledged messages held in memory.
func WithMaxInFlight(n int) Option {
	return func(s *settings) {
		if n > 0 {
			s.maxInFlight = n
		}
	}
}

// WithSweepInterval sets how often a Tailer reads every stream it follows
// whether it rang or not (default DefaultSweepInterval): the bound on how late
// an entry whose bell was lost (or never rung) is delivered.
func WithSweepInterval(d time.Duration) Option {
	return func(s *settings) {
		if d > 0 {
			s.sweepEvery = d
		}
	}
}

// WithPollInterval sets the pause after an empty read on Redis Cluster,
// where reads of streams in different slots cannot block together and are
// polled instead (default DefaultPollInterval). Unused on a single Redis.
func WithPollInterval(d time.Duration) Option {
	return func(s *settings) {
		if d > 0 {
			s.pollInterval = d
		}
	}
}

// WithStartID sets where a newly created consumer group starts: "0" (the
// default: everything already in the stream) or "$" (only new entries).
func WithStartID(id string) Option { return func(s *settings) { s.startID = id } }

// WithMinIdle sets how long a delivered message may stay unacknowledged
// before another consumer reclaims it. Handlers must finish well within it
// (a consumer keeps its own in-flight messages alive while it is healthy).
func WithMinIdle(d time.Duration) Option {
	return func(s *settings) {
		if d > 0 {
			s.minIdle = d
		}
	}
}

// WithClaimInterval sets how often pending messages are scanned for reclaim.
func WithClaimInterval(d time.Duration) Option {
	return func(s *settings) {
		if d > 0 {
			s.claimInterval = d
		}
	}
}

// WithMaxDeliveries sets after how many deliveries a failing message is moved
// to the dead-letter stream (and acknowledged).
func WithMaxDeliveries(n int64) Option {
	return func(s *settings) {
		if n > 0 {
			s.maxDeliveries = n
		}
	}
}

// WithDeadLetterStream overrides the dead-letter stream (default
// DeadLetter(group)).
func WithDeadLetterStream(key string) Option { return func(s *settings) { s.deadLetter = key } }

// WithConsumerGC removes other consumers of the group that have been idle
// longer than idle and own no pending message, checking every `every`.
func WithConsumerGC(idle, every time.Duration) Option {
	return func(s *settings) {
		if idle > 0 {
			s.consumerGCIdle = idle
		}
		if every > 0 {
			s.consumerGCEvery = every
		}
	}
}

// WithLagInterval sets how often group lag and pending counts are sampled
// for the metrics.
func WithLagInterval(d time.Duration) Option {
	return func(s *settings) {
		if d > 0 {
			s.lagEvery = d
		}
	}
}

// WithShutdownGrace bounds how long a running handler may continue after the
// Run context is cancelled before its own context is cancelled too.
func WithShutdownGrace(d time.Duration) Option {
	return func(s *settings) {
		if d > 0 {
			s.shutdownGrace = d
		}
	}
}

// WithBackoff sets the retry delay range of the loops after Redis errors
// (default 50 ms to 2 s): the wait doubles from min up to max over
// consecutive failures, each one drawn from the upper half of its step, and
// starts again at min after a success.
func WithBackoff(min, max time.Duration) Option {
	return func(s *settings) {
		if min > 0 {
			s.backoffMin = min
		}
		if max >= min {
			s.backoffMax = max
		}
	}
}

func (s *settings) maxLenFor(stream string) int64 {
	if s.retention != nil {
		return s.retention(stream)
	}
	return s.maxLen
}

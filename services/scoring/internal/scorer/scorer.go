// Package scorer is the scoring service: it consumes the scoring inputs of
// every game (pulka:scoring:hands, consumer group), stores them once per
// (game, kind, hand), rebuilds the game's sheet from what is stored,
// publishes each new version to the table's sheet stream, and when a game is
// over keeps it for history and publishes its final standings, once.
package scorer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/telemetry"
	"github.com/pulka/pulka/services/scoring/internal/sheets"
	"github.com/pulka/pulka/services/scoring/internal/sheetstore"
)

const instrumentation = "github.com/pulka/pulka/services/scoring"

// Scorer handles scoring inputs. It keeps no state between messages: all of
// it is in Redis, so any number of replicas may share the consumer group.
type Scorer struct {
	w      *sheetstore.Writer
	log    *slog.Logger
	tracer trace.Tracer
	m      *metrics
	// marshal is deterministic so that the same sheet is always the same
	// bytes (the frozen final sheet and standings are compared by value).
	marshal proto.MarshalOptions
}

// New makes a scorer writing through rdb.
func New(rdb redis.UniversalClient, opts sheetstore.WriterOptions, log *slog.Logger,
	tp trace.TracerProvider, mp metric.MeterProvider) (*Scorer, error) {
	m, err := newMetrics(mp.Meter(instrumentation))
	if err != nil {
		return nil, err
	}
	return &Scorer{
		w: sheetstore.NewWriter(rdb, opts), log: log, tracer: tp.Tracer(instrumentation), m: m,
		marshal: proto.MarshalOptions{Deterministic: true},
	}, nil
}

// Handle is the consumer's handler for one HandsStream entry. It returns nil
// once the input is stored and everything that follows from it — the sheet,
// the history record, the standings — is written; an error leaves the entry
// pending, and the redelivery repeats only what is missing (every step is
// idempotent). A malformed input returns an error wrapping sheets.ErrInvalid:
// it is retried up to the delivery limit and then dead-lettered, with the
// reason.
func (s *Scorer) Handle(ctx context.Context, msg streams.Message) (err error) {
	in := &scoringv1.ScoringInput{}
	if err := proto.Unmarshal(msg.Data, in); err != nil {
		s.m.input(ctx, "unknown", "invalid")
		return fmt.Errorf("%w: %s: %w", sheets.ErrInvalid, msg.Key(), err)
	}
	kind := inputKind(in)
	if err := sheets.Validate(in); err != nil {
		s.m.input(ctx, kind, "invalid")
		s.log.WarnContext(ctx, "invalid scoring input", "id", msg.ID, "kind", kind, "err", err)
		return fmt.Errorf("%s: %w", msg.Key(), err)
	}
	// The consumer continued the trace stored in the entry's fields; an
	// input whose producer only filled the message's own field is joined
	// here instead.
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = telemetry.ContextWithTrace(ctx, in.GetTrace())
	}
	ctx, span := s.tracer.Start(ctx, "scoring.apply", trace.WithAttributes(
		attribute.String("pulka.table_id", in.GetTableId()), attribute.String("pulka.game_id", in.GetGameId()),
		attribute.String("pulka.scoring.input", kind)))
	defer func() {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}()

	tid, gid := in.GetTableId(), in.GetGameId()
	stored, err := s.store(ctx, in, msg.Key())
	if err != nil {
		return err
	}
	game, err := s.w.Load(ctx, tid, gid)
	if err != nil {
		return err
	}
	result := "stored"
	if !stored.Applied {
		result = "duplicate"
		if conflicts(in, game) {
			// Same game and hand, different facts: a producer bug. The first
			// version stays; say so loudly.
			result = "conflict"
			s.log.ErrorContext(ctx, "scoring input conflicts with the stored one; keeping the stored one",
				"table", tid, "game", gid, "kind", kind, "id", msg.ID, "stored_by", stored.Mark)
		}
	}
	s.m.input(ctx, kind, result)
	at, ok := scoringclient.EntryTime(msg.ID)
	if !ok {
		at = time.Now()
	}
	return s.settle(ctx, tid, gid, game, at, msg.Key())
}

func inputKind(in *scoringv1.ScoringInput) string {
	switch in.GetInput().(type) {
	case *scoringv1.ScoringInput_GameStarted:
		return "start"
	case *scoringv1.ScoringInput_HandResult:
		return "hand"
	case *scoringv1.ScoringInput_GameEnded:
		return "end"
	}
	return "unknown"
}

// store writes the input once.
func (s *Scorer) store(ctx context.Context, in *scoringv1.ScoringInput, mark string) (sheetstore.Stored, error) {
	tid, gid := in.GetTableId(), in.GetGameId()
	var (
		st   sheetstore.Stored
		data []byte
		err  error
	)
	switch x := in.GetInput().(type) {
	case *scoringv1.ScoringInput_GameStarted:
		if data, err = s.marshal.Marshal(x.GameStarted); err == nil {
			st, err = s.w.StoreStart(ctx, tid, gid, data, mark)
		}
	case *scoringv1.ScoringInput_HandResult:
		if data, err = s.marshal.Marshal(x.HandResult); err == nil {
			st, err = s.w.StoreHand(ctx, tid, gid, x.HandResult.GetHandIndex(), data, mark)
		}
	case *scoringv1.ScoringInput_GameEnded:
		if data, err = s.marshal.Marshal(x.GameEnded); err == nil {
			st, err = s.w.StoreEnd(ctx, tid, gid, data, mark)
		}
	}
	if err != nil {
		return st, fmt.Errorf("scorer: store %s input: %w", inputKind(in), err)
	}
	return st, nil
}

// conflicts reports whether a duplicate input differs from the stored one.
func conflicts(in *scoringv1.ScoringInput, g sheetstore.Game) bool {
	var stored []byte
	var fresh, old proto.Message
	switch x := in.GetInput().(type) {
	case *scoringv1.ScoringInput_GameStarted:
		stored, fresh, old = g.Start, x.GameStarted, &scoringv1.GameStarted{}
	case *scoringv1.ScoringInput_HandResult:
		stored, fresh, old = g.Hands[x.HandResult.GetHandIndex()], x.HandResult, &scoringv1.HandResult{}
	case *scoringv1.ScoringInput_GameEnded:
		stored, fresh, old = g.End, x.GameEnded, &scoringv1.GameEnded{}
	default:
		return false
	}
	if stored == nil {
		return false // expired meanwhile; nothing to compare
	}
	if err := proto.Unmarshal(stored, old); err != nil {
		return true
	}
	return !proto.Equal(fresh, old)
}

// decode turns the stored bytes of a game into messages.
func decode(tid, gid string, st sheetstore.Game) (sheets.Game, error) {
	g := sheets.Game{TableID: tid, GameID: gid, Hands: make(map[uint32]*scoringv1.HandResult, len(st.Hands))}
	if st.Start != nil {
		g.Start = &scoringv1.GameStarted{}
		if err := proto.Unmarshal(st.Start, g.Start); err != nil {
			return g, fmt.Errorf("scorer: stored start of %s: %w", gid, err)
		}
	}
	if st.End != nil {
		g.End = &scoringv1.GameEnded{}
		if err := proto.Unmarshal(st.End, g.End); err != nil {
			return g, fmt.Errorf("scorer: stored end of %s: %w", gid, err)
		}
	}
	for i, b := range st.Hands {
		h := &scoringv1.HandResult{}
		if err := proto.Unmarshal(b, h); err != nil {
			return g, fmt.Errorf("scorer: stored hand %d of %s: %w", i, gid, err)
		}
		g.Hands[i] = h
	}
	return g, nil
}

// settle brings the stored sheet and everything after it up to date with
// the stored inputs: commit the sheet the inputs give (a no-op when it is
// already stored), and when the game is over, archive it and publish its
// standings. Every step is idempotent, so any delivery of any input of the
// game may run it, in any order, any number of times.
func (s *Scorer) settle(ctx context.Context, tid, gid string, st sheetstore.Game, at time.Time, mark string) error {
	start := time.Now()
	defer func() { s.m.settleTime.Record(ctx, time.Since(start).Seconds()) }()
	game, err := decode(tid, gid, st)
	if err != nil {
		return err
	}
	if game.Start == nil {
		// Its GameStarted was delivered out of order and will come; the
		// inputs wait in the store until then.
		s.log.DebugContext(ctx, "game not started yet; input kept", "table", tid, "game", gid)
		return nil
	}
	committed := st.Committed
	if !committed.Final {
		res, err := sheets.Build(game)
		if err != nil {
			return err
		}
		if res.Refused != nil {
			s.m.refused.Add(ctx, 1)
			s.log.ErrorContext(ctx, "a stored hand cannot be scored; the sheet stops before it",
				"table", tid, "game", gid, "err", res.Refused)
		}
		c, err := s.commitment(ctx, res, at)
		if err != nil {
			return err
		}
		cr, err := s.w.Commit(ctx, tid, gid, c)
		if err != nil {
			return err
		}
		if cr.Published {
			s.m.published.Add(ctx, 1)
		}
		if !cr.Committed.Final {
			return nil
		}
		committed = cr.Committed
	}
	return s.finish(ctx, tid, gid, game, committed, mark)
}

// commitment encodes a built sheet for Commit.
func (s *Scorer) commitment(ctx context.Context, res sheets.Result, at time.Time) (sheetstore.Commit, error) {
	sheet, err := s.marshal.Marshal(res.Sheet)
	if err != nil {
		return sheetstore.Commit{}, fmt.Errorf("scorer: encode sheet: %w", err)
	}
	update, err := s.marshal.Marshal(&scoringv1.SheetUpdate{Version: res.Version, Sheet: res.Sheet, Trace: telemetry.TraceContextFrom(ctx)})
	if err != nil {
		return sheetstore.Commit{}, fmt.Errorf("scorer: encode sheet update: %w", err)
	}
	c := sheetstore.Commit{Version: res.Version, Final: res.Final, EndedAt: at, Sheet: sheet, Update: update}
	if res.Final {
		// The standings are frozen with the final sheet, without a trace, so
		// that every later delivery archives and publishes the same ones.
		fs := &scoringv1.FinalStandings{TableId: res.Sheet.GetTableId(), GameId: res.Sheet.GetGameId(), Standings: res.Standings}
		if c.Standings, err = s.marshal.Marshal(fs); err != nil {
			return sheetstore.Commit{}, fmt.Errorf("scorer: encode standings: %w", err)
		}
	}
	return c, nil
}

// finish keeps a finished game for history and publishes its standings.
func (s *Scorer) finish(ctx context.Context, tid, gid string, game sheets.Game, c sheetstore.Committed, mark string) error {
	fs := &scoringv1.FinalStandings{}
	if err := proto.Unmarshal(c.Standings, fs); err != nil || len(fs.GetStandings()) == 0 {
		return errors.Join(fmt.Errorf("scorer: final standings of %s are missing or unreadable", gid), err)
	}
	var players []string
	for _, p := range game.Start.GetPlayers() {
		if p.GetPlayerId() != "" {
			players = append(players, p.GetPlayerId())
		}
	}
	// History first: when the wallet reads the standings, the game is
	// already in the players' history.
	if err := s.w.Archive(ctx, sheetstore.Record{
		TableID: tid, GameID: gid, EndedAt: c.EndedAt, Sheet: c.Sheet, Standings: c.Standings, PlayerIDs: players,
	}); err != nil {
		return err
	}
	fs.Trace = telemetry.TraceContextFrom(ctx)
	data, err := s.marshal.Marshal(fs)
	if err != nil {
		return fmt.Errorf("scorer: encode standings: %w", err)
	}
	published, err := s.w.PublishStandings(ctx, gid, data, mark)
	if err != nil {
		return err
	}
	if published {
		s.m.finished.Add(ctx, 1)
		s.log.InfoContext(ctx, "game finished", "table", tid, "game", gid, "ended_at", c.EndedAt,
			"winner_seat", fs.GetStandings()[0].GetSeat())
	}
	return nil
}

// metrics are the service's own instruments; the consumer's (lag, pending,
// handler time, dead letters) come from pkg/streams.
type metrics struct {
	inputs     metric.Int64Counter
	published  metric.Int64Counter
	finished   metric.Int64Counter
	refused    metric.Int64Counter
	settleTime metric.Float64Histogram
}

func newMetrics(m metric.Meter) (*metrics, error) {
	var out metrics
	var errs [5]error
	out.inputs, errs[0] = m.Int64Counter("pulka.scoring.inputs",
		metric.WithDescription("Scoring inputs handled, by kind (start, hand, end) and result (stored, duplicate, conflict, invalid)."),
		metric.WithUnit("{input}"))
	out.published, errs[1] = m.Int64Counter("pulka.scoring.sheets.published",
		metric.WithDescription("Sheet versions published to the tables' sheet streams."), metric.WithUnit("{sheet}"))
	out.finished, errs[2] = m.Int64Counter("pulka.scoring.games.finished",
		metric.WithDescription("Games whose final standings were published."), metric.WithUnit("{game}"))
	out.refused, errs[3] = m.Int64Counter("pulka.scoring.hands.refused",
		metric.WithDescription("Times a stored hand could not be scored (the sheet stops before it)."), metric.WithUnit("{hand}"))
	out.settleTime, errs[4] = m.Float64Histogram("pulka.scoring.settle.duration",
		metric.WithDescription("Time to rebuild, commit and (at the end) archive a game's sheet."), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("scorer: metrics: %w", err)
	}
	return &out, nil
}

func (m *metrics) input(ctx context.Context, kind, result string) {
	m.inputs.Add(ctx, 1, metric.WithAttributes(attribute.String("kind", kind), attribute.String("result", result)))
}

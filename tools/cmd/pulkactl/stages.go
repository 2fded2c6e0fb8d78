package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// The stage sink splits a move's latency by where it was spent, from the
// services' own spans: with --stages ADDR the generator is an OTLP/HTTP
// trace receiver, and the services, run with OTEL_EXPORTER_OTLP_ENDPOINT
// pointing at it and a sampler (scripts/loadrun.sh: LOADRUN_STAGES=RATIO),
// send it the traces of the moves they sample. A move's trace is a chain of
// spans across the processes (the trace context rides in every stream
// entry), all timed by the one machine's clock:
//
//	gateway  "ws <command>"             the command, read and decoded
//	gateway    publish (command)        its append to the table's commands
//	runner       process (command)      the runner reads it
//	runner         table.apply …
//	runner           publish (event)    the event's append to the table's stream
//	gateway            process (event)  the gateway's tailer reads it
//	gateway              "ws write" ×N  each client's frame written
//
// The stages are cut where each append begins: the entry exists somewhere
// inside its publish span (a batch's wait, then the round trip to Redis),
// and its reader may well start before the span ends, so cutting at the
// end would give overlapping, negative stages.
//
// What the spans cannot show is the client's side: the command's way from
// the generator's send into the gateway's read, and the last frame's way
// from the gateway's write to the client's read (the kernel's and the
// generator's own time). The difference between the generator's latency
// and the spans' total is that.

// maxSpanBody bounds one export request: the SDK sends batches of at most
// 512 spans by default, a few hundred bytes each.
const maxSpanBody = 32 << 20

// A stage is one part of a sampled move's way through the services.
type stage int

const (
	stageGatewayIn  stage = iota // command read → its append begins
	stageToRunner                // the append begins → the runner reads it
	stageRunner                  // the runner reads it → its first event's append begins
	stageToGateway               // the event's append begins → the gateway's tailer reads it
	stageGatewayOut              // tailer reads it → the last client's frame written
	stageTotal                   // command read → the last client's frame written
	numStages
)

var stageNames = [numStages]string{
	stageGatewayIn:  "gateway in (command read → its append begins)",
	stageToRunner:   "to the runner (append begins → runner reads it)",
	stageRunner:     "runner (reads it → its event's append begins)",
	stageToGateway:  "to the gateway (append begins → gateway reads it)",
	stageGatewayOut: "gateway out (event read → last client's frame written)",
	stageTotal:      "in the services (command read → last frame written)",
}

// spanRec is what the stages need of one span.
type spanRec struct {
	traceID    [16]byte
	id, parent [8]byte
	service    string
	name       string
	start, end int64 // Unix nanoseconds
}

// stageSink receives spans over OTLP/HTTP (protobuf, optionally gzipped).
// Decoding them takes the generator a few milliseconds of CPU a second at
// the ratios loadrun uses (hundreds of spans a second), next to its clients'
// hundreds.
type stageSink struct {
	mu       sync.Mutex
	spans    []spanRec
	last     time.Time // when the last batch arrived
	rejected int       // requests that were not a trace export

	addr string // where it listens
	srv  *http.Server
	done chan error
}

// listenStages starts a sink on addr.
func listenStages(addr string) (*stageSink, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--stages: %w", err)
	}
	s := &stageSink{addr: ln.Addr().String(), done: make(chan error, 1)}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the sink.
func (s *stageSink) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serveErr := <-s.done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}

func (s *stageSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		s.reject()
		http.Error(w, "only POST /v1/traces (OTLP/HTTP protobuf)", http.StatusNotFound)
		return
	}
	body, err := readSpanBody(w, r)
	if err != nil {
		s.reject()
		code := http.StatusBadRequest
		if errors.Is(err, errSpanBodyTooLarge) {
			code = http.StatusRequestEntityTooLarge
		}
		http.Error(w, err.Error(), code)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		s.reject()
		http.Error(w, "not an OTLP trace export: "+err.Error(), http.StatusBadRequest)
		return
	}
	recs := requestSpans(&req)
	s.mu.Lock()
	s.spans = append(s.spans, recs...)
	s.last = time.Now()
	s.mu.Unlock()
	resp, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

var errSpanBodyTooLarge = fmt.Errorf("export request over %d bytes", maxSpanBody)

// readSpanBody reads an export request's body, inflated, within maxSpanBody.
func readSpanBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	var rd io.Reader = http.MaxBytesReader(w, r.Body, maxSpanBody)
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(rd)
		if err != nil {
			return nil, err
		}
		defer func() { _ = zr.Close() }()
		rd = io.LimitReader(zr, maxSpanBody+1)
	}
	var b bytes.Buffer
	_, err := b.ReadFrom(rd)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) || b.Len() > maxSpanBody {
		return nil, errSpanBodyTooLarge
	}
	return b.Bytes(), err
}

func (s *stageSink) reject() {
	s.mu.Lock()
	s.rejected++
	s.mu.Unlock()
}

// uniqueSpans is spans with each span once: an exporter that retried a
// request sends its spans again.
func uniqueSpans(spans []spanRec) []spanRec {
	type spanKey struct {
		trace [16]byte
		id    [8]byte
	}
	seen := make(map[spanKey]bool, len(spans))
	out := spans[:0]
	for _, r := range spans {
		key := spanKey{r.traceID, r.id}
		if !seen[key] {
			seen[key] = true
			out = append(out, r)
		}
	}
	return out
}

func requestSpans(req *coltracepb.ExportTraceServiceRequest) []spanRec {
	var recs []spanRec
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				r := spanRec{service: service, name: sp.GetName(),
					start: int64(sp.GetStartTimeUnixNano()), end: int64(sp.GetEndTimeUnixNano())}
				copy(r.traceID[:], sp.GetTraceId())
				copy(r.id[:], sp.GetSpanId())
				copy(r.parent[:], sp.GetParentSpanId())
				// A span without an id (or its own parent) cannot be
				// placed in a tree: a well-formed exporter sends none.
				if r.id != ([8]byte{}) && r.id != r.parent {
					recs = append(recs, r)
				}
			}
		}
	}
	return recs
}

// settle waits until no batch has come for quiet (the services export
// what they sampled every OTEL_BSP_SCHEDULE_DELAY), or until limit.
func (s *stageSink) settle(ctx context.Context, quiet, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		last := s.last
		s.mu.Unlock()
		if time.Since(last) >= quiet {
			return
		}
		sleepCtx(ctx, quiet/4)
		if ctx.Err() != nil {
			return
		}
	}
}

// stageReport is the sampled moves' latency by stage.
type stageReport struct {
	stages     [numStages][]time.Duration // each sorted
	moves      int                        // sampled moves of the window with every stage
	incomplete int                        // sampled moves of the window missing a span
	spans      int
	rejected   int
}

// report splits the sampled moves whose command was read in [from, to).
func (s *stageSink) report(from, to time.Time) *stageReport {
	s.mu.Lock()
	spans := uniqueSpans(slices.Clone(s.spans))
	rejected := s.rejected
	s.mu.Unlock()
	r := splitStages(spans, from, to)
	r.rejected = rejected
	return r
}

const (
	serviceGateway = "gateway"
	serviceRunner  = "table-runner"
	spanWSWrite    = "ws write"
	spanWSJoin     = "ws join"
)

// splitStages follows each sampled move's trace from its command span at
// the gateway to the last client's write (the chain in the comment at the
// top of this file).
func splitStages(spans []spanRec, from, to time.Time) *stageReport {
	r := &stageReport{spans: len(spans)}
	byTrace := map[[16]byte][]spanRec{}
	for _, sp := range spans {
		byTrace[sp.traceID] = append(byTrace[sp.traceID], sp)
	}
	for _, tr := range byTrace {
		children := map[[8]byte][]spanRec{}
		for _, sp := range tr {
			children[sp.parent] = append(children[sp.parent], sp)
		}
		for _, root := range children[[8]byte{}] {
			if !isCommandSpan(root) || root.start < from.UnixNano() || root.start >= to.UnixNano() {
				continue
			}
			d, ok := moveStages(root, children)
			if !ok {
				r.incomplete++
				continue
			}
			r.moves++
			for i, v := range d {
				r.stages[i] = append(r.stages[i], v)
			}
		}
	}
	for i := range r.stages {
		slices.Sort(r.stages[i])
	}
	return r
}

// isCommandSpan is the gateway's span of a table command ("ws play", "ws
// bid", …): the root of a move's trace.
func isCommandSpan(sp spanRec) bool {
	return sp.service == serviceGateway && strings.HasPrefix(sp.name, "ws ") && sp.name != spanWSWrite && sp.name != spanWSJoin
}

// moveStages measures one move's stages, or reports that a span is missing.
func moveStages(root spanRec, children map[[8]byte][]spanRec) (d [numStages]time.Duration, ok bool) {
	// The command's append: the gateway's child span read by the runner.
	var appended, read spanRec
	found := false
	for _, p := range children[root.id] {
		if r, ok := earliestIn(children[p.id], serviceRunner); ok && p.service == serviceGateway {
			appended, read, found = p, r, true
			break
		}
	}
	if !found {
		return d, false
	}
	// The first event: of the runner's spans under its read that the
	// gateway read, the earliest.
	var event, tail spanRec
	found = false
	var walk func(sp spanRec)
	walk = func(sp spanRec) {
		for _, c := range children[sp.id] {
			if c.service != serviceRunner {
				continue
			}
			if g, ok := earliestIn(children[c.id], serviceGateway); ok && (!found || c.start < event.start) {
				event, tail, found = c, g, true
			}
			walk(c)
		}
	}
	walk(read)
	if !found {
		return d, false
	}
	// The last client's frame: the latest "ws write" under the gateway's
	// reads of that event.
	var written int64
	var writes func(sp spanRec)
	writes = func(sp spanRec) {
		for _, c := range children[sp.id] {
			if c.service != serviceGateway {
				continue
			}
			if c.name == spanWSWrite {
				written = max(written, c.end)
			}
			writes(c)
		}
	}
	writes(event)
	if written == 0 {
		return d, false
	}
	ns := func(a, b int64) time.Duration { return time.Duration(b - a) }
	d[stageGatewayIn] = ns(root.start, appended.start)
	d[stageToRunner] = ns(appended.start, read.start)
	d[stageRunner] = ns(read.start, event.start)
	d[stageToGateway] = ns(event.start, tail.start)
	d[stageGatewayOut] = ns(tail.start, written)
	d[stageTotal] = ns(root.start, written)
	return d, true
}

// earliestIn is the earliest-starting span of service among spans.
func earliestIn(spans []spanRec, service string) (spanRec, bool) {
	var best spanRec
	ok := false
	for _, sp := range spans {
		if sp.service == service && (!ok || sp.start < best.start) {
			best, ok = sp, true
		}
	}
	return best, ok
}

func (r *stageReport) String() string {
	if r.moves == 0 {
		return fmt.Sprintf("stages: no sampled move of the window came with all its spans (%d spans received, %d incomplete moves, %d requests refused): were the services run with OTEL_EXPORTER_OTLP_ENDPOINT set to this sink and a sampler?\n",
			r.spans, r.incomplete, r.rejected)
	}
	s := fmt.Sprintf("by stage, from the services' spans of %d sampled moves (%d more missing a span):\n", r.moves, r.incomplete)
	for i, name := range stageNames {
		d := r.stages[i]
		s += fmt.Sprintf("  %-56s %s\n", name, tailString(d))
	}
	return s
}

package ws

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// startWriter runs a writer for the frames that became due (the outbox's
// start, called under its lock): one at a time, and only while there is
// something to write, so an idle connection holds no writer's stack.
func (c *conn) startWriter() {
	c.background.Add(1)
	go c.writeDue()
}

// writeDue writes batches while frames are due. A flushing close is
// completed here: the last batch, then the close frame.
func (c *conn) writeDue() {
	defer c.background.Done()
	for {
		frames, traces, closed, ok := c.out.next()
		switch {
		case !ok:
			return
		case closed:
			if c.flush {
				ctx, cancel := context.WithTimeout(c.ctx, flushTimeout)
				_ = c.writeTraced(ctx, frames, traces)
				cancel()
				c.closeNow(c.closeCode(), c.closeReason)
			}
			return
		}
		if err := c.writeTraced(c.ctx, frames, traces); err != nil {
			// A client that cannot take its frames in WriteTimeout is
			// as good as gone.
			c.fail(CloseSlowConsumer, closeReasonSlow, false)
		}
	}
}

// flushTimeout bounds the writing of what is queued when a connection is
// closed on purpose.
const flushTimeout = 2 * time.Second

// writeTraced writes a batch of frames. When some of them belong to recorded
// spans (SendTraced: a sampled event's fan-out), the write is a span under
// each, so that their traces end at the write to the client; the frames of
// unsampled traces, nearly all of them, start no span.
func (c *conn) writeTraced(ctx context.Context, frames [][]byte, traces []trace.SpanContext) error {
	if len(traces) == 0 {
		return c.writeBatch(ctx, frames)
	}
	spans := make([]trace.Span, len(traces))
	for i, sc := range traces {
		_, spans[i] = c.s.deps.Tracer.Start(trace.ContextWithSpanContext(ctx, sc), "ws write",
			trace.WithAttributes(attribute.String("player", c.claims.PlayerID), attribute.Int("frames", len(frames))))
	}
	err := c.writeBatch(ctx, frames)
	for _, span := range spans {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
	return err
}

// writeBatch writes frames in order, within WriteTimeout for the whole
// batch, and with one system call when the connection is corkable.
func (c *conn) writeBatch(ctx context.Context, frames [][]byte) error {
	if len(frames) == 0 {
		return nil
	}
	deadline := time.Now().Add(c.s.cfg.WriteTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if c.cork == nil {
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		for _, f := range frames {
			if err := c.ws.Write(ctx, c.msgType, f); err != nil {
				return err
			}
		}
		return nil
	}
	// Corked, the library's writes only fill memory (c.steady spares them
	// a timer each); the one network write is uncork's, under the deadline.
	c.cork.cork()
	var err error
	for _, f := range frames {
		if err = c.ws.Write(c.steady, c.msgType, f); err != nil { //nolint:contextcheck // memory only; ctx's deadline is uncork's
			break
		}
	}
	if uerr := c.cork.uncork(deadline, c.s.cfg.WriteTimeout/2); err == nil {
		err = uerr
	}
	return err
}

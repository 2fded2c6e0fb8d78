package store

import (
	"context"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// pipeliner coalesces concurrent script runs into pipelines, as
// streams.Batcher does for publishes: while `flushers` pipelines are in
// flight the next calls queue, and a caller that finds a slot free sends the
// queue (its own call first) itself and keeps sending what queued meanwhile.
// There is no linger timer: a lone call costs one round trip. Many workers
// (the consumer's, one per command shard) thus share round trips, and
// Redis reads and answers a whole pipeline per system call instead of one
// script each. Each call is still its own script run, atomic on its own.
type pipeliner struct {
	rdb      redis.UniversalClient
	flushers int

	mu    sync.Mutex
	queue []*call
	busy  int
}

type call struct {
	sc   *redis.Script
	keys []string
	args []any
	cmd  *redis.Cmd
	done chan struct{}
}

// maxPipeline bounds one pipeline (the rest waits for the next).
const maxPipeline = 256

func (p *pipeliner) run(ctx context.Context, sc *redis.Script, keys []string, args ...any) *redis.Cmd {
	c := &call{sc: sc, keys: keys, args: args, done: make(chan struct{})}
	p.mu.Lock()
	p.queue = append(p.queue, c)
	if p.busy >= p.flushers {
		p.mu.Unlock()
		select {
		case <-c.done:
			return c.cmd
		case <-ctx.Done():
			// The call may still run (it is queued or sent); the caller
			// treats it as unknown and retries with the same id.
			cmd := redis.NewCmd(ctx)
			cmd.SetErr(ctx.Err())
			return cmd
		}
	}
	p.busy++
	// A flush must not fail the other callers' calls because this caller's
	// context ends; go-redis's own timeouts bound it.
	fctx := context.WithoutCancel(ctx)
	for {
		batch := p.queue
		if len(batch) > maxPipeline {
			batch = batch[:maxPipeline]
		}
		p.queue = p.queue[len(batch):]
		p.mu.Unlock()
		p.flush(fctx, batch)
		p.mu.Lock()
		if len(p.queue) == 0 {
			p.busy--
			p.mu.Unlock()
			return c.cmd
		}
	}
}

func (p *pipeliner) flush(ctx context.Context, batch []*call) {
	if len(batch) == 1 {
		c := batch[0]
		c.cmd = c.sc.Run(ctx, p.rdb, c.keys, c.args...)
		close(c.done)
		return
	}
	pipe := p.rdb.Pipeline()
	for _, c := range batch {
		c.cmd = c.sc.EvalSha(ctx, pipe, c.keys, c.args...)
	}
	_, _ = pipe.Exec(ctx) // each call's error is on its own command
	for _, c := range batch {
		// A script Redis does not know (restarted, SCRIPT FLUSH) did not
		// run: send it again with its body (Run loads it).
		if err := c.cmd.Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			c.cmd = c.sc.Run(ctx, p.rdb, c.keys, c.args...)
		}
		close(c.done)
	}
}

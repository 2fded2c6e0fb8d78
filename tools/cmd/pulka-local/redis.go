package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/redistest"
)

// ErrRedis means no Redis that can run Pulka could be started or reached.
var ErrRedis = errors.New("redis")

// installHint is how to get a real Redis on Debian.
const installHint = "install redis-server (apt-get install redis-server)"

// Which Redis a run uses.
const (
	redisExisting = "existing"
	redisServer   = "redis-server"
	redisEmbedded = "embedded"
)

// redisHandle is the Redis the services use, and how to stop it.
type redisHandle struct {
	Addr string
	// Kind is redisExisting, redisServer or redisEmbedded.
	Kind string
	// About says what it is, for the summary.
	About string
	stop  func()
}

// Stop stops a Redis the launcher started (not an existing one).
func (h *redisHandle) Stop() {
	if h.stop != nil {
		h.stop()
	}
}

// startRedis gives the services a Redis: the one cfg names, or a
// redis-server started on a free loopback port when one is on PATH (lookPath
// is exec.LookPath outside tests), or else the embedded Redis-compatible
// server. Whichever it is must pass probeRedis, the commands Pulka's stream
// library relies on; one that does not is refused rather than left to fail
// halfway through a game.
func startRedis(ctx context.Context, cfg Config, hs host, con *console) (*redisHandle, error) {
	embedded := hs.Embedded
	if embedded == nil {
		embedded = startEmbedded
	}
	var h *redisHandle
	switch _, lookErr := hs.LookPath("redis-server"); {
	case cfg.Redis != "":
		h = &redisHandle{Addr: cfg.Redis, Kind: redisExisting, About: "yours (-redis)"}
	case cfg.ClusterMasters > 0:
		cl, err := redistest.LaunchCluster(cfg.ClusterMasters, cfg.ClusterReplicas) //nolint:contextcheck // no context in its API; bounded by its own timeouts
		if err != nil {
			return nil, fmt.Errorf("%w: start a Redis Cluster: %w", ErrRedis, err)
		}
		h = &redisHandle{Addr: cl.Addrs()[0], Kind: redisServer, stop: cl.Stop,
			About: fmt.Sprintf("a Redis Cluster of %d masters with %d replicas each (redis-server), in memory only, gone when this stops", cfg.ClusterMasters, cfg.ClusterReplicas)}
	case !cfg.EmbeddedRedis && lookErr == nil:
		srv, err := redistest.Launch() //nolint:contextcheck // no context in its API; bounded by its own start timeout
		if err != nil {
			return nil, fmt.Errorf("%w: start redis-server: %w", ErrRedis, err)
		}
		h = &redisHandle{Addr: srv.Addr(), Kind: redisServer, About: "redis-server, in memory only, gone when this stops", stop: srv.Stop}
	default:
		if !cfg.EmbeddedRedis {
			con.Printf("redis-server is not installed: using the embedded Redis-compatible server (to use a real one, %s)", installHint)
		}
		emb, err := embedded()
		if err != nil {
			return nil, err
		}
		h = emb
	}
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{h.Addr}, IsClusterMode: cfg.clusterMode(), MaxRetries: -1})
	defer rdb.Close()
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := probeRedis(pctx, rdb); err != nil {
		h.Stop()
		switch h.Kind {
		case redisEmbedded:
			return nil, fmt.Errorf("%w: the embedded Redis-compatible server cannot run Pulka (%w); %s", ErrRedis, err, installHint)
		case redisExisting:
			return nil, fmt.Errorf("%w: the Redis at %s cannot run Pulka: %w", ErrRedis, h.Addr, err)
		default:
			return nil, fmt.Errorf("%w: the redis-server on PATH cannot run Pulka (%w); Pulka needs Redis 7", ErrRedis, err)
		}
	}
	if h.Kind != redisEmbedded {
		if v, err := redisVersion(pctx, rdb); err == nil {
			h.About = "Redis " + v + ", " + h.About
		}
	}
	return h, nil
}

// startEmbedded starts miniredis on a free loopback port, with TTLs that
// run on the wall clock as a real Redis's do (leases and heartbeats expire).
func startEmbedded() (*redisHandle, error) {
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true)
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("%w: start the embedded server: %w", ErrRedis, err)
	}
	return &redisHandle{Addr: m.Addr(), Kind: redisEmbedded,
		About: "embedded (miniredis), in memory only, gone when this stops", stop: m.Close}, nil
}

// redisVersion reads redis_version from INFO server.
func redisVersion(ctx context.Context, rdb redis.UniversalClient) (string, error) {
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "redis_version:"); ok {
			return v, nil
		}
	}
	return "", errors.New("no redis_version in INFO")
}

// probeRedis runs, on keys of its own that it deletes afterwards, each kind
// of command Pulka's services send: capped stream appends (XADD MAXLEN ~),
// blocking reads (XREAD BLOCK), consumer groups (XGROUP, XREADGROUP,
// XAUTOCLAIM, XACK, XPENDING, XINFO), Lua scripts by hash (EVALSHA) calling
// stream, hash, TIME and PUBLISH commands (a bell carrying its entry), SUBSCRIBE, MULTI/EXEC,
// and keys that expire. The
// error names the first step that failed.
func probeRedis(ctx context.Context, rdb redis.UniversalClient) error {
	var tag [6]byte
	_, _ = rand.Read(tag[:])
	base := "pulka-local:probe:{" + hex.EncodeToString(tag[:]) + "}:"
	stream, hash, str, counter := base+"s", base+"h", base+"k", base+"n"

	step := func(what string, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	want := func(what string, got, wantN int) error {
		if got != wantN {
			return fmt.Errorf("%s: got %d, want %d", what, got, wantN)
		}
		return nil
	}

	if err := step("PING", rdb.Ping(ctx).Err()); err != nil {
		return err
	}
	defer rdb.Del(context.WithoutCancel(ctx), stream, hash, str, counter)
	first, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, MaxLen: 1000, Approx: true, Values: []any{"f", "1"}}).Result()
	if err := step("XADD MAXLEN ~", err); err != nil {
		return err
	}

	// A blocked XREAD must wake up for an entry added after it started.
	woke := make(chan error, 1)
	go func() {
		res, err := rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{stream, first}, Block: 5 * time.Second}).Result()
		if err == nil && (len(res) != 1 || len(res[0].Messages) != 1) {
			err = fmt.Errorf("read %v", res)
		}
		woke <- err
	}()
	time.Sleep(50 * time.Millisecond)
	second, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"f", "2"}}).Result()
	if err := step("XADD", err); err != nil {
		return err
	}
	if err := step("XREAD BLOCK", <-woke); err != nil {
		return err
	}

	if err := step("XGROUP CREATE MKSTREAM", rdb.XGroupCreateMkStream(ctx, stream, "g", "0").Err()); err != nil {
		return err
	}
	read, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c1", Streams: []string{stream, ">"}, Count: 10, Block: -1}).Result()
	if err := step("XREADGROUP", err); err != nil {
		return err
	}
	if err := want("XREADGROUP entries", len(read[0].Messages), 2); err != nil {
		return err
	}
	claimed, _, err := rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: stream, Group: "g", Consumer: "c2", MinIdle: 0, Start: "0-0", Count: 10}).Result()
	if err := step("XAUTOCLAIM", err); err != nil {
		return err
	}
	if err := want("XAUTOCLAIM entries", len(claimed), 2); err != nil {
		return err
	}
	acked, err := rdb.XAck(ctx, stream, "g", first, second).Result()
	if err := step("XACK", err); err != nil {
		return err
	}
	if err := want("XACK", int(acked), 2); err != nil {
		return err
	}
	pending, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: stream, Group: "g", Start: "-", End: "+", Count: 10}).Result()
	if err := step("XPENDING", err); err != nil {
		return err
	}
	if err := want("XPENDING after XACK", len(pending), 0); err != nil {
		return err
	}
	if err := step("XINFO STREAM", rdb.XInfoStream(ctx, stream).Err()); err != nil {
		return err
	}
	if err := step("XINFO GROUPS", rdb.XInfoGroups(ctx, stream).Err()); err != nil {
		return err
	}
	if err := step("XINFO CONSUMERS", rdb.XInfoConsumers(ctx, stream, "g").Err()); err != nil {
		return err
	}

	// The fenced append and the exactly-once effects are Lua scripts run by
	// hash that call stream and hash commands, read the server's clock and
	// ring the stream's bell (PUBLISH), which Tailers hear on a SUBSCRIBE.
	bells := rdb.Subscribe(ctx, stream)
	defer bells.Close()
	if _, err := bells.ReceiveTimeout(ctx, 5*time.Second); err != nil {
		return step("SUBSCRIBE", err)
	}
	script := redis.NewScript(`
local prev = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', '1000', '*', 'f', ARGV[1])
redis.call('PUBLISH', KEYS[1], table.concat({'1 ', prev[1][1], ' ', id, ' ', #ARGV[1], ':', ARGV[1]}))
redis.call('HSET', KEYS[2], 'owner', ARGV[1], 'epoch', 1)
redis.call('PEXPIRE', KEYS[2], 60000)
local cur = redis.call('HMGET', KEYS[2], 'owner', 'epoch')
local t = redis.call('TIME')
return {id, cur[1], t[1]}`)
	if err := step("SCRIPT LOAD", script.Load(ctx, rdb).Err()); err != nil {
		return err
	}
	res, err := script.EvalSha(ctx, rdb, []string{stream, hash}, "lua").Slice()
	if err := step("EVALSHA", err); err != nil {
		return err
	}
	if len(res) != 3 || res[1] != "lua" {
		return fmt.Errorf("EVALSHA: got %v, want [<id> lua <seconds>]", res)
	}
	if sec, err := strconv.ParseInt(fmt.Sprint(res[2]), 10, 64); err != nil || time.Since(time.Unix(sec, 0)).Abs() > time.Minute {
		return fmt.Errorf("TIME in a script: got %v, not the current time", res[2])
	}
	m, err := bells.ReceiveTimeout(ctx, 5*time.Second)
	if err != nil {
		return step("PUBLISH in a script, heard on SUBSCRIBE", err)
	}
	msg, ok := m.(*redis.Message)
	if !ok {
		return fmt.Errorf("PUBLISH in a script: got %T, want a message", m)
	}
	if want := fmt.Sprintf("1 %s %v 3:lua", second, res[0]); msg.Payload != want {
		return fmt.Errorf("a bell built in a script (XREVRANGE, table.concat): got %q, want %q", msg.Payload, want)
	}

	if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, counter)
		p.PExpire(ctx, counter, time.Minute)
		return nil
	}); err != nil {
		return step("MULTI/EXEC", err)
	}

	// Leases and heartbeats rely on keys expiring by themselves.
	if err := step("SET PX", rdb.Set(ctx, str, "x", 50*time.Millisecond).Err()); err != nil {
		return err
	}
	time.Sleep(150 * time.Millisecond)
	switch err := rdb.Get(ctx, str).Err(); {
	case err == nil:
		return errors.New("expiry: a key set with PX 50 ms still exists after 150 ms")
	case !errors.Is(err, redis.Nil):
		return fmt.Errorf("expiry: GET: %w", err)
	}
	return nil
}

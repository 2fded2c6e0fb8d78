package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterSlots is the number of hash slots of every Redis Cluster.
const clusterSlots = 16384

// NodeTimeout is the cluster-node-timeout of a StartCluster cluster: how
// long a master may be unreachable before its replica takes over. Short, so
// a failover happens within a test; long enough that a loaded 2-core
// machine does not fail over by accident.
const NodeTimeout = 2 * time.Second

// Cluster is a real multi-node Redis Cluster: masters, each owning an equal
// share of the 16384 slots, and replicas of each, every node a redis-server
// of its own on a loopback port. Unlike WithCluster's one-node cluster,
// keys of different slots live on different processes, clients follow
// MOVED redirections, and a master can be killed for its replica to take
// over.
type Cluster struct {
	nodes   []*Server
	timeout time.Duration

	mu      sync.Mutex
	closers []func() error
}

// StartCluster starts a cluster of masters masters, each with replicas
// replicas, for the test, and stops it in t.Cleanup. opts apply to every
// node (WithPersistence, WithArgs); WithCluster is implied.
func StartCluster(t testing.TB, masters, replicas int, opts ...Option) *Cluster {
	t.Helper()
	c, err := newCluster(masters, replicas, func() (string, error) { return t.TempDir(), nil }, false, opts)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(c.Stop)
	return c
}

// LaunchCluster is StartCluster outside a test (a TestMain, a measurement
// program): the caller must call Stop, which also removes the nodes'
// directories.
func LaunchCluster(masters, replicas int, opts ...Option) (*Cluster, error) {
	return newCluster(masters, replicas, func() (string, error) { return os.MkdirTemp("", "redistest-cluster-") }, true, opts)
}

func newCluster(masters, replicas int, mkdir func() (string, error), ownsDir bool, opts []Option) (*Cluster, error) {
	if masters < 1 || replicas < 0 {
		return nil, fmt.Errorf("cluster of %d masters with %d replicas each", masters, replicas)
	}
	nodeOpts := append([]Option{func(c *config) {
		c.cluster, c.member = true, true
		c.args = append(c.args, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.Itoa(int(NodeTimeout/time.Millisecond)),
			// A replica that was connected until its master died may always
			// take over (the default refuses one whose link is "too old").
			"--cluster-replica-validity-factor", "0")
	}}, opts...)
	c := &Cluster{}
	for range masters * (1 + replicas) {
		dir, err := mkdir()
		if err != nil {
			c.Stop()
			return nil, fmt.Errorf("node directory: %w", err)
		}
		s, err := launch(dir, nodeOpts...)
		if err != nil {
			if ownsDir {
				_ = os.RemoveAll(dir)
			}
			c.Stop()
			return nil, err
		}
		s.ownsDir = ownsDir
		c.nodes = append(c.nodes, s)
		c.timeout = s.cfg.startTimeout
	}
	if err := c.form(masters, replicas); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// form joins the nodes into one cluster (CLUSTER MEET), gives each master
// its range of slots, makes the replicas replicate their masters, and waits
// until every node sees the cluster as ok and every replica is in sync.
func (c *Cluster) form(masters, replicas int) error {
	ctx := context.Background()
	admin := make([]*redis.Client, len(c.nodes))
	for i, s := range c.nodes {
		admin[i] = redis.NewClient(&redis.Options{Addr: s.Addr(), PoolSize: 1})
		defer admin[i].Close()
	}
	for i := 1; i < len(c.nodes); i++ {
		if err := admin[i].ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(c.nodes[0].Port())).Err(); err != nil {
			return fmt.Errorf("cluster meet: %w", err)
		}
	}
	for m := range masters {
		lo, hi := m*clusterSlots/masters, (m+1)*clusterSlots/masters-1
		if err := admin[m].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			return fmt.Errorf("cluster addslotsrange %d %d: %w", lo, hi, err)
		}
	}
	ids := make([]string, len(c.nodes))
	for i, a := range admin {
		id, err := a.Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			return fmt.Errorf("cluster myid: %w", err)
		}
		ids[i] = id
	}
	// A replica can only replicate a master it already knows of: wait until
	// the gossip reached every node.
	if err := c.until(func() error {
		for i, a := range admin {
			nodes, err := a.ClusterNodes(ctx).Result()
			if err != nil {
				return err
			}
			if n := strings.Count(strings.TrimSpace(nodes), "\n") + 1; n != len(c.nodes) {
				return fmt.Errorf("node %d knows %d of %d nodes", i, n, len(c.nodes))
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for r := masters; r < len(c.nodes); r++ {
		master := (r - masters) % masters
		if err := admin[r].Do(ctx, "CLUSTER", "REPLICATE", ids[master]).Err(); err != nil {
			return fmt.Errorf("cluster replicate: %w", err)
		}
	}
	return c.WaitHealthy(ctx)
}

// until retries f until it succeeds or the start timeout passes.
func (c *Cluster) until(f func() error) error {
	deadline := time.Now().Add(c.timeout + 2*NodeTimeout)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: cluster: %w", err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// WaitHealthy waits until every running node reports cluster_state:ok,
// all slots are served, and every running replica's link to its master is
// up — so a write acknowledged from now on reaches a replica.
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	return c.until(func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, s := range c.Running() {
			a := redis.NewClient(&redis.Options{Addr: s.Addr(), PoolSize: 1, MaxRetries: -1})
			info, err := a.ClusterInfo(ctx).Result()
			if err == nil && !strings.Contains(info, "cluster_state:ok") {
				err = fmt.Errorf("node %s: cluster_state not ok", s.Addr())
			}
			if err == nil && !strings.Contains(info, "cluster_slots_ok:16384") {
				err = fmt.Errorf("node %s: not every slot is ok", s.Addr())
			}
			var repl string
			if err == nil {
				repl, err = a.Info(ctx, "replication").Result()
			}
			_ = a.Close()
			if err != nil {
				return err
			}
			if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
				return fmt.Errorf("replica %s: link to its master is not up", s.Addr())
			}
		}
		return nil
	})
}

// Nodes are every node of the cluster, running or killed.
func (c *Cluster) Nodes() []*Server { return c.nodes }

// Running are the nodes whose process is alive.
func (c *Cluster) Running() []*Server {
	var up []*Server
	for _, s := range c.nodes {
		if s.running() {
			up = append(up, s)
		}
	}
	return up
}

// Addrs are every node's host:port: the seed list of a cluster client
// (PULKA_REDIS_ADDR of a service).
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		addrs[i] = s.Addr()
	}
	return addrs
}

// Client returns a cluster client of every node, closed on cleanup.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	return c.NewClient()
}

// NewClient is Client without a testing.TB; Stop closes it.
func (c *Cluster) NewClient() *redis.ClusterClient {
	// go-redis keeps sending a dead master's slots to it until it reloads
	// the topology, by default once a minute: a second, as pkg/daemon's.
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), ClusterStateReloadInterval: time.Second})
	c.mu.Lock()
	c.closers = append(c.closers, cc.Close)
	c.mu.Unlock()
	return cc
}

// ErrNoMaster means no running node serves the slot as master.
var ErrNoMaster = errors.New("redistest: no running master serves the slot")

// MasterOf is the running node that is master of key's slot, asked of the
// cluster itself (so it is right after a failover).
func (c *Cluster) MasterOf(ctx context.Context, key string) (*Server, error) {
	for _, s := range c.Running() {
		a := redis.NewClient(&redis.Options{Addr: s.Addr(), PoolSize: 1, MaxRetries: -1})
		slot, err := a.ClusterKeySlot(ctx, key).Result()
		var shards []redis.ClusterShard
		if err == nil {
			shards, err = a.ClusterShards(ctx).Result()
		}
		_ = a.Close()
		if err != nil {
			continue
		}
		for _, sh := range shards {
			if !slices.ContainsFunc(sh.Slots, func(r redis.SlotRange) bool { return r.Start <= slot && slot <= r.End }) {
				continue
			}
			for _, n := range sh.Nodes {
				if n.Role != "master" || n.Health != "online" {
					continue
				}
				if m := c.byAddr(net.JoinHostPort(n.IP, strconv.FormatInt(n.Port, 10))); m != nil && m.running() {
					return m, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("%w of %q", ErrNoMaster, key)
}

func (c *Cluster) byAddr(addr string) *Server {
	for _, s := range c.nodes {
		if s.Addr() == addr {
			return s
		}
	}
	return nil
}

// role is "master" or "slave" as the node says (INFO replication).
func role(ctx context.Context, s *Server) (string, error) {
	a := redis.NewClient(&redis.Options{Addr: s.Addr(), PoolSize: 1, MaxRetries: -1})
	defer a.Close()
	info, err := a.Info(ctx, "replication").Result()
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "role:"); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("node %s: no role in INFO replication", s.Addr())
}

// Failover kills the master of key's slot with SIGKILL, as a crash would,
// and waits until one of its replicas has taken over and the cluster is ok
// again. It returns the killed node (to Restart: it comes back as a
// replica of the new master) and the new master.
//
// Just before the kill it pauses the master's writes (CLIENT PAUSE WRITE:
// the clients' writes wait, unanswered) until its replicas have everything
// it acknowledged, so the failover loses nothing: a test checks the
// services across a failover, not Redis's asynchronous replication, which
// can lose the last milliseconds of writes (docs/operations.md). The writes
// the pause held are never executed; their clients get an error and retry on
// the new master.
func (c *Cluster) Failover(ctx context.Context, key string) (killed, promoted *Server, err error) {
	old, err := c.MasterOf(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	if err := c.drainReplication(ctx, old); err != nil {
		return nil, nil, err
	}
	old.Kill()
	err = c.until(func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, err := c.MasterOf(ctx, key)
		if err != nil {
			return err
		}
		if m == old {
			return errors.New("the killed master still serves the slot")
		}
		if r, err := role(ctx, m); err != nil || r != "master" {
			return fmt.Errorf("node %s is not master yet (%s): %w", m.Addr(), r, err)
		}
		promoted = m
		return nil
	})
	if err != nil {
		return old, nil, err
	}
	// The other nodes learn of the promotion by gossip: wait until all agree.
	if err := c.WaitHealthy(ctx); err != nil {
		return old, promoted, err
	}
	return old, promoted, nil
}

// drainReplication pauses m's writes and waits until every replica of m has
// m's whole replication stream (its offset is m's master_repl_offset).
func (c *Cluster) drainReplication(ctx context.Context, m *Server) error {
	a := redis.NewClient(&redis.Options{Addr: m.Addr(), PoolSize: 1, MaxRetries: -1})
	defer a.Close()
	pause := (2*NodeTimeout + c.timeout).Milliseconds()
	if err := a.Do(ctx, "CLIENT", "PAUSE", pause, "WRITE").Err(); err != nil {
		return fmt.Errorf("pause the writes of %s: %w", m.Addr(), err)
	}
	return c.until(func() error {
		info, err := a.Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		var offset string
		var replicas []string
		for _, line := range strings.Split(info, "\n") {
			line = strings.TrimSpace(line)
			if v, ok := strings.CutPrefix(line, "master_repl_offset:"); ok {
				offset = v
			}
			if strings.HasPrefix(line, "slave") && strings.Contains(line, "offset=") {
				replicas = append(replicas, line)
			}
		}
		if len(replicas) == 0 {
			return fmt.Errorf("master %s has no replica to take over", m.Addr())
		}
		for _, r := range replicas {
			if !strings.Contains(r+",", ",offset="+offset+",") {
				return fmt.Errorf("replica %s is behind offset %s", r, offset)
			}
		}
		return nil
	})
}

// Stop closes every client made by Client/NewClient and stops every node.
// It is safe to call more than once.
func (c *Cluster) Stop() {
	c.mu.Lock()
	closers := c.closers
	c.closers = nil
	c.mu.Unlock()
	for _, f := range closers {
		_ = f()
	}
	for _, s := range c.nodes {
		s.Stop()
	}
}

// running tells whether the process is alive.
func (s *Server) running() bool {
	s.mu.Lock()
	exited := s.exited
	s.mu.Unlock()
	if exited == nil {
		return false
	}
	select {
	case <-exited:
		return false
	default:
		return true
	}
}

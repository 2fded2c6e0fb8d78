package ws

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// RFC 6455 opcodes.
const (
	opText  = 0x1
	opClose = 0x8
	opPing  = 0x9
	opPong  = 0xA
)

// closeHandshakeWait is how long coder/websocket's Close waits for the
// peer's close frame before it drops the TCP connection anyway (its
// waitCloseHandshake): a peer that answers nothing is hung up on after it.
const closeHandshakeWait = 5 * time.Second

// slack absorbs scheduling under -race on a busy machine.
const slack = 3 * time.Second

type wsFrame struct {
	op      byte
	payload []byte
}

// readWSFrame reads one frame, unmasking a client's.
func readWSFrame(r io.Reader) (wsFrame, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return wsFrame{}, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return wsFrame{}, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return wsFrame{}, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	var mask [4]byte
	masked := h[1]&0x80 != 0
	if masked {
		if _, err := io.ReadFull(r, mask[:]); err != nil {
			return wsFrame{}, err
		}
	}
	if n > 1<<24 {
		return wsFrame{}, fmt.Errorf("frame of %d bytes", n)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return wsFrame{}, err
	}
	if masked {
		for i := range p {
			p[i] ^= mask[i%4]
		}
	}
	return wsFrame{op: h[0] & 0x0f, payload: p}, nil
}

// rawClient is a WebSocket client written by hand on a TCP connection: it
// sees every frame the server sends, pings included, and answers none of
// them (coder/websocket's client would answer pings whenever it reads).
type rawClient struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

// dialRaw upgrades a TCP connection with the player's session cookie, so
// that the connection is authenticated at once.
func (g *gateway) dialRaw(t *testing.T, player string) *rawClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", g.http.Listener.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(nc, "GET / HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nCookie: pulka_session=%s\r\n\r\n",
		g.http.Listener.Addr(), key, g.token(t, player)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	closeBody(resp)
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		t.Fatalf("handshake answered %s %v", resp.Status, resp.Header)
	}
	_ = nc.SetDeadline(time.Time{})
	return &rawClient{t: t, nc: nc, br: br}
}

// frame reads the next frame the server sent, by deadline.
func (c *rawClient) frame(deadline time.Time) (wsFrame, error) {
	_ = c.nc.SetReadDeadline(deadline)
	return readWSFrame(c.br)
}

// fakeMeter records the sums of the server's int64 counters by name and
// attributes; every other instrument is a no-op.
type fakeMeter struct {
	noop.Meter
	mu   sync.Mutex
	sums map[string]int64
}

func newFakeMeter() *fakeMeter { return &fakeMeter{sums: map[string]int64{}} }

func meterKey(name string, set attribute.Set) string {
	return name + "{" + set.Encoded(attribute.DefaultEncoder()) + "}"
}

func (m *fakeMeter) add(name string, incr int64, opts []metric.AddOption) {
	key := meterKey(name, metric.NewAddConfig(opts).Attributes())
	m.mu.Lock()
	m.sums[key] += incr
	m.mu.Unlock()
}

// value is the sum of name's measurements with exactly attrs.
func (m *fakeMeter) value(name string, attrs ...attribute.KeyValue) int64 {
	key := meterKey(name, attribute.NewSet(attrs...))
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sums[key]
}

func (m *fakeMeter) Int64Counter(name string, _ ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return fakeCounter{m: m, name: name}, nil
}

func (m *fakeMeter) Int64UpDownCounter(name string, _ ...metric.Int64UpDownCounterOption) (metric.Int64UpDownCounter, error) {
	return fakeUpDown{m: m, name: name}, nil
}

type fakeCounter struct {
	noop.Int64Counter
	m    *fakeMeter
	name string
}

func (c fakeCounter) Add(_ context.Context, incr int64, opts ...metric.AddOption) {
	c.m.add(c.name, incr, opts)
}
func (fakeCounter) Enabled(context.Context) bool { return true }

type fakeUpDown struct {
	noop.Int64UpDownCounter
	m    *fakeMeter
	name string
}

func (c fakeUpDown) Add(_ context.Context, incr int64, opts ...metric.AddOption) {
	c.m.add(c.name, incr, opts)
}
func (fakeUpDown) Enabled(context.Context) bool { return true }

// A client that never answers the server's ping (a dead peer, or one that
// stopped reading) is closed with 1008 "no pong" one PingTimeout after the
// first unanswered ping, and is hung up on even though it never answers the
// close either; the server's count and metrics of open connections drop.
func TestKeepalive_AClientThatNeverPongsIsClosed(t *testing.T) {
	const interval, timeout = 50 * time.Millisecond, 100 * time.Millisecond
	m := newFakeMeter()
	g := newEnv(t).gatewayCfg(t, Config{PingInterval: interval, PingTimeout: timeout}, func(d *Deps) { d.Meter = m })
	start := time.Now()
	c := g.dialRaw(t, "ana")
	f, err := c.frame(time.Now().Add(5 * time.Second))
	if err != nil || f.op != opText || !strings.Contains(string(f.payload), `"welcome"`) {
		t.Fatalf("first frame: %v %q, want welcome", err, f.payload)
	}
	waitOpen(t, g.srv, 1)
	if n := m.value("pulka_gateway_ws_connections"); n != 1 {
		t.Fatalf("pulka_gateway_ws_connections = %d with the client connected, want 1", n)
	}

	// Read (without answering) until the close frame.
	pings := 0
	for {
		f, err = c.frame(start.Add(interval + timeout + slack))
		if err != nil {
			t.Fatalf("no close frame within %s of connecting (%d pings seen): %v", interval+timeout+slack, pings, err)
		}
		if f.op == opPing {
			pings++
			continue
		}
		if f.op != opClose {
			t.Fatalf("frame with opcode %#x before the close", f.op)
		}
		break
	}
	closedAfter := time.Since(start)
	if len(f.payload) < 2 {
		t.Fatalf("close frame without a code: %q", f.payload)
	}
	code, reason := websocket.StatusCode(binary.BigEndian.Uint16(f.payload)), string(f.payload[2:])
	if code != ClosePolicy || reason != "no pong" {
		t.Fatalf("close %d %q, want %d \"no pong\"", code, reason, ClosePolicy)
	}
	if pings != 1 {
		t.Fatalf("%d pings before the close, want exactly 1: the first unanswered one ends the connection", pings)
	}
	if closedAfter < interval+timeout {
		t.Fatalf("closed %s after connecting, before PingInterval+PingTimeout (%s): the pong was not waited for", closedAfter, interval+timeout)
	}

	// The client answers nothing, not even the close: the server hangs up
	// by itself.
	for {
		if _, err = c.frame(time.Now().Add(closeHandshakeWait + slack)); err != nil {
			break
		}
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("after the close frame: %v, want the server to end the TCP connection", err)
	}
	waitOpen(t, g.srv, 0)
	if n := g.srv.Closed(ClosePolicy); n != 1 {
		t.Fatalf("Closed(1008) = %d, want 1", n)
	}
	// The metrics are recorded just after the connection leaves the count.
	for deadline := time.Now().Add(slack); ; time.Sleep(5 * time.Millisecond) {
		open, closed := m.value("pulka_gateway_ws_connections"), m.value("pulka_gateway_ws_closed", attribute.Int("code", int(ClosePolicy)))
		if open == 0 && closed == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the close: pulka_gateway_ws_connections = %d, want 0; pulka_gateway_ws_closed{code=1008} = %d, want 1", open, closed)
		}
	}
}

// sniffer counts the ping and pong frames crossing a client's TCP
// connection: each direction's bytes are copied to a parser that skips the
// HTTP handshake and then reads frames.
type sniffer struct {
	net.Conn
	in, out   *io.PipeWriter
	pingsIn   atomic.Int64 // pings the server sent
	pongsOut  atomic.Int64 // pongs the client answered with
	closeOnce sync.Once
}

func newSniffer(nc net.Conn) *sniffer {
	s := &sniffer{Conn: nc}
	var inR, outR *io.PipeReader
	inR, s.in = io.Pipe()
	outR, s.out = io.Pipe()
	go s.parse(inR, func(br *bufio.Reader) error {
		resp, err := http.ReadResponse(br, nil)
		closeBody(resp)
		return err
	}, opPing, &s.pingsIn)
	go s.parse(outR, func(br *bufio.Reader) error {
		_, err := http.ReadRequest(br)
		return err
	}, opPong, &s.pongsOut)
	return s
}

func (s *sniffer) parse(r *io.PipeReader, handshake func(*bufio.Reader) error, op byte, n *atomic.Int64) {
	defer func() { _, _ = io.Copy(io.Discard, r) }() // never block the connection
	br := bufio.NewReader(r)
	if handshake(br) != nil {
		return
	}
	for {
		f, err := readWSFrame(br)
		if err != nil {
			return
		}
		if f.op == op {
			n.Add(1)
		}
	}
}

func (s *sniffer) Read(b []byte) (int, error) {
	n, err := s.Conn.Read(b)
	if n > 0 {
		_, _ = s.in.Write(b[:n])
	}
	return n, err
}

func (s *sniffer) Write(b []byte) (int, error) {
	n, err := s.Conn.Write(b)
	if n > 0 {
		_, _ = s.out.Write(b[:n])
	}
	return n, err
}

func (s *sniffer) Close() error {
	s.closeOnce.Do(func() {
		_ = s.in.Close()
		_ = s.out.Close()
	})
	return s.Conn.Close()
}

// A client that keeps reading answers every ping (coder/websocket pongs
// while a read is pending) and stays connected across many ping intervals.
func TestKeepalive_AClientThatPongsStaysConnected(t *testing.T) {
	const interval, timeout = 50 * time.Millisecond, 2 * time.Second
	const rounds = 6
	m := newFakeMeter()
	g := newEnv(t).gatewayCfg(t, Config{PingInterval: interval, PingTimeout: timeout}, func(d *Deps) { d.Meter = m })

	start := time.Now()
	wc, s, next, readErr := g.dialSniffed(t, "ana")
	if typ := next(); typ != "welcome" {
		t.Fatalf("first frame %q, want welcome", typ)
	}

	for deadline := time.Now().Add(rounds*interval + slack); s.pongsOut.Load() < rounds; time.Sleep(5 * time.Millisecond) {
		select {
		case err := <-readErr:
			t.Fatalf("closed after %d pings and %d pongs: %v (close %d)", s.pingsIn.Load(), s.pongsOut.Load(), err, websocket.CloseStatus(err))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pings and %d pongs in %s, want %d of each every %s", s.pingsIn.Load(), s.pongsOut.Load(), time.Since(start), rounds, interval)
		}
	}
	if elapsed := time.Since(start); elapsed < rounds*interval {
		t.Fatalf("%d pongs after %s, sooner than %d ping intervals", s.pongsOut.Load(), elapsed, rounds)
	}
	if pings := s.pingsIn.Load(); pings < rounds {
		t.Fatalf("%d pongs for %d pings", s.pongsOut.Load(), pings)
	}
	if n := g.srv.Open(); n != 1 {
		t.Fatalf("%d connections open, want 1", n)
	}
	if n := g.srv.Closed(ClosePolicy); n != 0 {
		t.Fatalf("Closed(1008) = %d, want 0", n)
	}
	if n := m.value("pulka_gateway_ws_connections"); n != 1 {
		t.Fatalf("pulka_gateway_ws_connections = %d, want 1", n)
	}
	// And it still works.
	appPing(t, wc, "p")
	if typ := next(); typ != "pong" {
		t.Fatalf("answer to ping: %q, want pong", typ)
	}
}

// dialSniffed connects name through a sniffer, with one reader throughout
// as a browser has: next returns the type of the next frame the client
// reads (failing the test if none comes in 5 s or the connection ends).
func (g *gateway) dialSniffed(t *testing.T, name string) (*websocket.Conn, *sniffer, func() string, <-chan error) {
	t.Helper()
	sniffed := make(chan *sniffer, 1)
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		s := newSniffer(nc)
		sniffed <- s
		return s, nil
	}}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wc, resp, err := websocket.Dial(ctx, g.url(), &websocket.DialOptions{HTTPClient: hc,
		HTTPHeader: http.Header{"Cookie": {"pulka_session=" + g.token(t, name)}}})
	closeBody(resp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wc.CloseNow() })
	s := <-sniffed
	types := make(chan string, 64)
	readErr := make(chan error, 1)
	go func() {
		for {
			_, b, err := wc.Read(context.Background())
			if err != nil {
				readErr <- err
				return
			}
			typ, _ := typeOf(b)
			types <- typ
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case typ := <-types:
			return typ
		case err := <-readErr:
			t.Fatalf("connection ended: %v (close %d)", err, websocket.CloseStatus(err))
		case <-time.After(5 * time.Second):
			t.Fatal("no frame in 5 s")
		}
		return ""
	}
	return wc, s, next, readErr
}

// appPing sends the protocol's own ping frame (answered by a pong frame).
func appPing(t *testing.T, wc *websocket.Conn, ref string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"ref": ref, "ping": map[string]any{}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := wc.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
}

// A client that sends frames shows it is alive: the server does not ping it
// while it speaks (a playing client sends every few seconds; each ping is a
// wake-up of the gateway and of the client, issue 24), and pings it again
// within two intervals once it falls silent.
func TestKeepalive_AClientThatSpeaksIsNotPinged(t *testing.T) {
	const interval, timeout, rounds = 200 * time.Millisecond, 2 * time.Second, 5
	g := newEnv(t).gateway(t, Config{PingInterval: interval, PingTimeout: timeout})
	wc, s, next, _ := g.dialSniffed(t, "ana")
	if typ := next(); typ != "welcome" {
		t.Fatalf("first frame %q, want welcome", typ)
	}
	for end, i := time.Now().Add(rounds*interval), 0; time.Now().Before(end); i++ {
		appPing(t, wc, strconv.Itoa(i))
		if typ := next(); typ != "pong" {
			t.Fatalf("answer to ping: %q, want pong", typ)
		}
		time.Sleep(interval / 10)
	}
	// One ping may slip in if this goroutine stalled a whole interval.
	if n := s.pingsIn.Load(); n > 1 {
		t.Fatalf("%d pings in %d intervals of a client sending every %s, want none", n, rounds, interval/10)
	}
	silent, before := time.Now(), s.pingsIn.Load()
	for s.pingsIn.Load() == before {
		if time.Since(silent) > 2*interval+slack {
			t.Fatalf("no ping within %s of the client falling silent", 2*interval+slack)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for deadline := time.Now().Add(slack); s.pongsOut.Load() <= before; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the silent client's pong never left")
		}
	}
	if n := g.srv.Open(); n != 1 {
		t.Fatalf("%d connections open, want 1", n)
	}
}

// An idle connection holds one goroutine, its reader: the keep-alive waits
// on a runtime timer, and a writer runs only while frames are due (each
// login below wrote a welcome, whose writer has ended since). A goroutine's
// stack was a third of an idle connection's memory.
func TestKeepalive_AnIdleConnectionHoldsOnlyItsReader(t *testing.T) {
	g := newEnv(t).gateway(t, Config{PingInterval: time.Hour})
	const n = 8
	for i := range n {
		g.login(t, fmt.Sprintf("idle%d", i))
	}
	count := func() int {
		buf := make([]byte, 1<<22)
		buf = buf[:runtime.Stack(buf, true)]
		k := 0
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "gateway/internal/ws.(*conn).") {
				k++
			}
		}
		return k
	}
	var got int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got = count(); got == n || time.Now().After(deadline) {
			break
		}
	}
	time.Sleep(50 * time.Millisecond)
	if got = count(); got != n {
		t.Fatalf("%d idle connections hold %d goroutines of theirs, want %d (a reader each)", n, got, n)
	}
}

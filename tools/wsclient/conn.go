package wsclient

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pulka/pulka/pkg/cards/cardpb"
	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"

	"github.com/cenkalti/backoff/v5"
	"github.com/coder/websocket"
	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/cards"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	"github.com/pulka/pulka/pkg/wire"
)

// Errors of a connection.
var (
	// ErrClosed: the connection was closed by Close, or ended for good.
	ErrClosed = errors.New("wsclient: connection closed")
	// ErrDisconnected: a frame was sent while the connection was being
	// dialled again. Sending the same command key again later is safe.
	ErrDisconnected = errors.New("wsclient: disconnected, reconnecting")
)

// Close codes after which dialling again cannot help (docs/protocol.md).
const (
	closeNoSession    = websocket.StatusCode(4001)
	closeNoHello      = websocket.StatusCode(4002)
	closeSessionEnded = websocket.StatusCode(4003) // expired or revoked: log in again
	closeTooManyConns = websocket.StatusCode(4029)
)

// Options configure Dial.
type Options struct {
	// Token authenticates the connection (Authorization: Bearer).
	Token string
	// HTTPClient makes the handshake; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Reconnect dials again when the connection drops (a gateway shutting
	// down, a network error, a 4008 for a slow reader) and joins every
	// joined table again from its last event id, so that no event is lost
	// or repeated. A TypeReconnected frame marks the seam.
	Reconnect bool
	// MinBackoff and MaxBackoff bound the wait between dials (100 ms, 5 s).
	MinBackoff, MaxBackoff time.Duration
	// MaxRedials is how many dials in a row may fail before the connection
	// gives up (20).
	MaxRedials int
	// Buffer is the capacity of the frame channel (256). The reader waits
	// for room, so a slow consumer slows the connection down, and the
	// gateway eventually drops it (4008) rather than anything being lost.
	Buffer int
	// ReadLimit is the largest frame accepted (16 MiB: a lobby view lists
	// every table).
	ReadLimit int64
	// HandshakeTimeout bounds one dial and its welcome (10 s).
	HandshakeTimeout time.Duration
	// Frames, when set, decodes event and sheet frames once for all the
	// connections sharing it (a load generator's clients); their Event and
	// Sheet are then shared and must not be modified.
	Frames *FrameCache
}

func (o *Options) defaults() {
	if o.MinBackoff <= 0 {
		o.MinBackoff = 100 * time.Millisecond
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(5*time.Second, o.MinBackoff)
	}
	if o.MaxRedials <= 0 {
		o.MaxRedials = 20
	}
	if o.Buffer <= 0 {
		o.Buffer = 256
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = 16 << 20
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = 10 * time.Second
	}
}

// Conn is one WebSocket connection to a gateway. Its methods are safe for
// concurrent use; Frames has a single consumer.
type Conn struct {
	url    string
	opts   Options
	player wire.Player
	frames chan Frame
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	ws     *websocket.Conn // nil while dialling again
	joined map[string]bool
	last   map[string]string // table → id of the last event or sheet received
	seeds  map[string]*tableSeeds
	refs   uint64
	err    error // why the connection ended for good
}

// WebSocketURL is the /ws endpoint of a gateway at server (http://host:port
// or ws://host:port, with or without a path).
func WebSocketURL(server string) string {
	s := strings.TrimSuffix(server, "/")
	switch {
	case strings.HasPrefix(s, "https://"):
		s = "wss://" + strings.TrimPrefix(s, "https://")
	case strings.HasPrefix(s, "http://"):
		s = "ws://" + strings.TrimPrefix(s, "http://")
	case !strings.HasPrefix(s, "ws://") && !strings.HasPrefix(s, "wss://"):
		s = "ws://" + s
	}
	if strings.HasSuffix(s, "/ws") {
		return s
	}
	return s + "/ws"
}

// Dial connects to the gateway at server, authenticates with opts.Token and
// returns once the gateway has said welcome. ctx bounds the dial only; the
// connection lives until Close (or until it ends for good).
func Dial(ctx context.Context, server string, opts Options) (*Conn, error) {
	opts.defaults()
	c := &Conn{url: WebSocketURL(server), opts: opts, frames: make(chan Frame, opts.Buffer),
		done: make(chan struct{}), joined: map[string]bool{}, last: map[string]string{}, seeds: map[string]*tableSeeds{}}
	ws, p, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	c.ws, c.player = ws, p
	// The reader outlives ctx, which bounds the dial only; Close ends it.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx)) //nolint:contextcheck // see above
	c.cancel = cancel
	go c.run(runCtx, ws)
	return c, nil
}

// connect dials once and reads the welcome.
func (c *Conn) connect(ctx context.Context) (*websocket.Conn, wire.Player, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.HandshakeTimeout)
	defer cancel()
	h := http.Header{}
	if c.opts.Token != "" {
		h.Set("Authorization", "Bearer "+c.opts.Token)
	}
	// Binary protobuf frames (docs/protocol.md, "Encodings"): the gateway
	// writes each frame once for every client that speaks them.
	ws, resp, err := websocket.Dial(ctx, c.url, &websocket.DialOptions{HTTPHeader: h, HTTPClient: c.opts.HTTPClient,
		Subprotocols: []string{wire.SubprotocolProto}})
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return nil, wire.Player{}, fmt.Errorf("wsclient: dial %s: %w", c.url, err)
	}
	ws.SetReadLimit(c.opts.ReadLimit)
	_, data, err := ws.Read(ctx)
	if err != nil {
		_ = ws.CloseNow()
		return nil, wire.Player{}, fmt.Errorf("wsclient: waiting for welcome: %w", err)
	}
	f, err := DecodeFrame(data, time.Now())
	switch {
	case err != nil:
	case f.Type == wire.TypeError:
		err = f.Err
	case f.Type != wire.TypeWelcome || f.Player == nil:
		err = fmt.Errorf("wsclient: first frame is %q, not welcome", f.Type)
	}
	if err != nil {
		_ = ws.CloseNow()
		return nil, wire.Player{}, err
	}
	return ws, *f.Player, nil
}

// Player is who the connection is authenticated as.
func (c *Conn) Player() wire.Player { return c.player }

// Frames delivers every frame, in order. It is closed when the connection
// ends for good; Err then says why.
func (c *Conn) Frames() <-chan Frame { return c.frames }

// Err is why the connection ended: nil while it lives and after Close.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Next returns the next frame.
func (c *Conn) Next(ctx context.Context) (Frame, error) {
	select {
	case f, ok := <-c.frames:
		if !ok {
			if err := c.Err(); err != nil {
				return Frame{}, err
			}
			return Frame{}, ErrClosed
		}
		return f, nil
	case <-ctx.Done():
		return Frame{}, ctx.Err()
	}
}

// WaitFor returns the first frame for which match is true, dropping the
// frames before it (meant for tests and simple scripts).
func (c *Conn) WaitFor(ctx context.Context, match func(Frame) bool) (Frame, error) {
	for {
		f, err := c.Next(ctx)
		if err != nil {
			return Frame{}, err
		}
		if match(f) {
			return f, nil
		}
	}
}

// LastEventID is the stream id of the last event or sheet received from
// table ("" before any).
func (c *Conn) LastEventID(table string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last[table]
}

// Close ends the connection (close code 1000) and waits for its reader.
func (c *Conn) Close() error {
	c.cancel()
	c.mu.Lock()
	ws := c.ws
	c.mu.Unlock()
	if ws != nil {
		_ = ws.Close(websocket.StatusNormalClosure, "")
	}
	<-c.done
	return nil
}

// Drop closes the network connection without a close frame, as a crash or
// a lost network would: a test of reconnection uses it.
func (c *Conn) Drop() {
	c.mu.Lock()
	ws := c.ws
	c.mu.Unlock()
	if ws != nil {
		_ = ws.CloseNow()
	}
}

// run reads frames until the connection ends for good, dialling again when
// allowed.
func (c *Conn) run(ctx context.Context, ws *websocket.Conn) {
	defer close(c.done)
	defer close(c.frames)
	for {
		err := c.read(ctx, ws)
		if ctx.Err() != nil {
			return
		}
		if s := websocket.CloseStatus(err); !c.opts.Reconnect || s == closeNoSession || s == closeNoHello ||
			s == closeSessionEnded || s == closeTooManyConns {
			c.fail(err)
			return
		}
		c.mu.Lock()
		c.ws = nil
		c.mu.Unlock()
		next, rerr := c.redial(ctx)
		if rerr != nil {
			if ctx.Err() == nil {
				c.fail(fmt.Errorf("%w (after %w)", rerr, err))
			}
			return
		}
		ws = next
		if !c.deliver(ctx, Frame{Type: TypeReconnected, Err: err, At: time.Now()}) {
			return
		}
	}
}

func (c *Conn) fail(err error) {
	c.mu.Lock()
	c.ws = nil
	if err == nil {
		err = ErrClosed
	}
	c.err = err
	c.mu.Unlock()
}

// read delivers the frames of one connection until it fails.
func (c *Conn) read(ctx context.Context, ws *websocket.Conn) error {
	// The library arms and disarms a timer for every read whose context
	// can end (a tenth of a load generator's CPU); reads get a context
	// that cannot, and the end of ctx closes the connection instead, which
	// ends a read as surely.
	stop := context.AfterFunc(ctx, func() { _ = ws.CloseNow() })
	defer stop()
	rctx := context.WithoutCancel(ctx)
	var buf bytes.Buffer // reused: decoding keeps nothing of the bytes
	for {
		data, err := readMessage(rctx, ws, &buf)
		if err != nil {
			_ = ws.CloseNow()
			return err
		}
		f, err := c.opts.Frames.Decode(data, time.Now())
		if err != nil {
			continue // a frame this client cannot read; the protocol test suite keeps this rare
		}
		if f.ID != "" && (f.Type == wire.TypeEvent || f.Type == wire.TypeSheet) {
			c.mu.Lock()
			c.last[f.Table] = f.ID
			c.mu.Unlock()
		}
		if f.Type == wire.TypeError && f.Table != "" && tableMissing(f.Err) {
			c.forget(f.Table)
		}
		if seeds := c.seeding(f); len(seeds) > 0 {
			// Not from the reader: a write may wait, and nothing
			// after the seed depends on it.
			go c.sendSeeds(ctx, seeds)
		}
		if !c.deliver(ctx, f) || (f.Legal != nil && !c.deliver(ctx, f.LegalFrame())) {
			_ = ws.CloseNow()
			return ctx.Err()
		}
	}
}

// readMessage reads one message into buf, which it resets first.
func readMessage(ctx context.Context, ws *websocket.Conn, buf *bytes.Buffer) ([]byte, error) {
	_, r, err := ws.Reader(ctx)
	if err != nil {
		return nil, err
	}
	buf.Reset()
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (c *Conn) deliver(ctx context.Context, f Frame) bool {
	select {
	case c.frames <- f:
		return true
	case <-ctx.Done():
		return false
	}
}

// redial dials with a growing backoff and joins every joined table again
// from its last event id.
func (c *Conn) redial(ctx context.Context) (*websocket.Conn, error) {
	// The waits double from MinBackoff up to MaxBackoff, without jitter
	// (RandomizationFactor 0): the one backoff of Pulka's Go code.
	bo := backoff.ExponentialBackOff{InitialInterval: c.opts.MinBackoff, Multiplier: 2, MaxInterval: c.opts.MaxBackoff}
	bo.Reset()
	var err error
	for range c.opts.MaxRedials {
		select {
		case <-time.After(bo.NextBackOff()):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		var ws *websocket.Conn
		if ws, _, err = c.connect(ctx); err != nil {
			continue
		}
		c.mu.Lock()
		tables := make(map[string]string, len(c.joined))
		for t := range c.joined {
			tables[t] = c.last[t]
			c.seedsOf(t).joining = true
		}
		c.ws = ws
		c.mu.Unlock()
		for t, last := range tables {
			if err = c.write(ctx, ws, &gatewayv1.ClientFrame{Ref: c.nextRef(),
				Frame: &gatewayv1.ClientFrame_Join{Join: &gatewayv1.Join{Table: t, LastEventId: last}}}); err != nil {
				break
			}
		}
		if err == nil {
			return ws, nil
		}
		_ = ws.CloseNow()
	}
	return nil, fmt.Errorf("wsclient: gave up reconnecting after %d dials: %w", c.opts.MaxRedials, err)
}

func (c *Conn) nextRef() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refs++
	return "r" + strconv.FormatUint(c.refs, 10)
}

func (c *Conn) write(ctx context.Context, ws *websocket.Conn, m *gatewayv1.ClientFrame) error {
	b, err := proto.Marshal(m)
	if err != nil {
		return fmt.Errorf("wsclient: encode %s: %w", wire.FrameType(m), err)
	}
	if err := ws.Write(ctx, websocket.MessageBinary, b); err != nil {
		return fmt.Errorf("wsclient: send %s: %w", wire.FrameType(m), err)
	}
	return nil
}

// Send writes one client frame as it is (a test of the gateway's refusals
// uses it for frames the typed senders never make). A frame without a ref
// gets one (m is changed); the ref is returned.
func (c *Conn) Send(ctx context.Context, m *gatewayv1.ClientFrame) (string, error) {
	if m.Ref == "" {
		m.Ref = c.nextRef()
	}
	c.mu.Lock()
	ws, failed := c.ws, c.err
	c.mu.Unlock()
	switch {
	case failed != nil:
		return m.Ref, fmt.Errorf("%w: %w", ErrClosed, failed)
	case ws == nil:
		return m.Ref, ErrDisconnected
	}
	return m.Ref, c.write(ctx, ws, m)
}

// Join follows table: the events after lastEventID ("" for the whole
// history), then live ones; the gateway answers joined. The table is joined
// again after a reconnect, from the last event received.
func (c *Conn) Join(ctx context.Context, table, lastEventID string) (string, error) {
	c.mu.Lock()
	c.joined[table] = true
	c.seedsOf(table).joining = true
	if lastEventID != "" {
		c.last[table] = lastEventID
	}
	c.mu.Unlock()
	return c.Send(ctx, &gatewayv1.ClientFrame{Frame: &gatewayv1.ClientFrame_Join{Join: &gatewayv1.Join{Table: table, LastEventId: lastEventID}}})
}

// Unjoin stops following table (the seat is kept).
func (c *Conn) Unjoin(ctx context.Context, table string) (string, error) {
	c.forget(table)
	return c.Send(ctx, &gatewayv1.ClientFrame{Frame: &gatewayv1.ClientFrame_Unjoin{Unjoin: &gatewayv1.Unjoin{Table: table}}})
}

// forget stops following table here: a reconnect does not join it again.
func (c *Conn) forget(table string) {
	c.mu.Lock()
	delete(c.joined, table)
	delete(c.seeds, table)
	delete(c.last, table)
	c.mu.Unlock()
}

// tableMissing reports whether an error frame says its table does not
// exist (any more): joining it again after a reconnect would only be
// refused again.
func tableMissing(err error) bool {
	var we *wire.Error
	return errors.As(err, &we) && (we.Code == wire.CodeTableGone || we.Code == wire.CodeTableNotFound)
}

// Ping asks for a pong (with the gateway's time); it returns the ref.
func (c *Conn) Ping(ctx context.Context) (string, error) {
	return c.Send(ctx, &gatewayv1.ClientFrame{Frame: &gatewayv1.ClientFrame_Ping{Ping: &gatewayv1.Ping{}}})
}

// WatchLobby starts (true) or stops lobby_view / lobby_update frames.
func (c *Conn) WatchLobby(ctx context.Context, on bool) (string, error) {
	return c.Send(ctx, &gatewayv1.ClientFrame{Frame: &gatewayv1.ClientFrame_Lobby{Lobby: &gatewayv1.WatchLobby{Watch: on}}})
}

// NewKey returns a random idempotency key.
func NewKey() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b[:])
}

// command sends a table command with the idempotency key (a new random one
// when key is empty) and returns its full command id, the caused_by of the
// events it causes.
func (c *Conn) command(ctx context.Context, m *gatewayv1.TableCommand, key string) (string, error) {
	if key == "" {
		key = NewKey()
	}
	m.Cmd = key
	h := c.attachSeed(m)
	_, err := c.Send(ctx, commandFrame(m))
	if err != nil && h != nil {
		c.detachSeed(m.GetTable(), h, m.GetCmd())
	}
	return wire.CommandID(c.player.ID, key), err
}

// commandFrame is the frame of a table command.
func commandFrame(m *gatewayv1.TableCommand) *gatewayv1.ClientFrame {
	return &gatewayv1.ClientFrame{Frame: &gatewayv1.ClientFrame_Command{Command: m}}
}

// Bid bids tricks at table.
func (c *Conn) Bid(ctx context.Context, table string, tricks int, key string) (string, error) {
	return c.Move(ctx, table, Move{Kind: MoveBid, Tricks: tricks}, key)
}

// Trump chooses trump at table; cards.NoSuit is no trump (bezi).
func (c *Conn) Trump(ctx context.Context, table string, suit cards.Suit, key string) (string, error) {
	return c.Move(ctx, table, Move{Kind: MoveTrump, Suit: suit}, key)
}

// Play plays card at table; a joker needs its declaration.
func (c *Conn) Play(ctx context.Context, table string, card cards.Card, joker *wire.JokerDecl, key string) (string, error) {
	return c.Move(ctx, table, Move{Kind: MovePlay, Card: card, Joker: joker}, key)
}

// Resign gives up the game (Japanese) or the seat to a bot (classic).
func (c *Conn) Resign(ctx context.Context, table, key string) (string, error) {
	return c.command(ctx, &gatewayv1.TableCommand{Table: table, Command: &gatewayv1.TableCommand_Resign{Resign: &tablev1.ResignCommand{}}}, key)
}

// Leave leaves the table.
func (c *Conn) Leave(ctx context.Context, table, key string) (string, error) {
	return c.command(ctx, &gatewayv1.TableCommand{Table: table, Command: &gatewayv1.TableCommand_Leave{Leave: &tablev1.LeaveCommand{}}}, key)
}

// Sit takes back seat from the bot playing it.
func (c *Conn) Sit(ctx context.Context, table string, seat int, key string) (string, error) {
	if seat < 0 || seat > wire.MaxSeat {
		return "", fmt.Errorf("wsclient: seat %d out of 0..%d", seat, wire.MaxSeat)
	}
	return c.command(ctx, &gatewayv1.TableCommand{Table: table,
		Command: &gatewayv1.TableCommand_Sit{Sit: &tablev1.SitCommand{Seat: uint32(seat)}}}, key)
}

// Move sends one of the moves a Model lists.
func (c *Conn) Move(ctx context.Context, table string, m Move, key string) (string, error) {
	tc, err := MoveCommand(table, m)
	if err != nil {
		return "", err
	}
	return c.command(ctx, tc, key)
}

// MoveCommand is the table command of a move at table, without its key
// (TableCommand.cmd): what Move sends.
func MoveCommand(table string, m Move) (*gatewayv1.TableCommand, error) {
	tc := &gatewayv1.TableCommand{Table: table}
	switch m.Kind {
	case MoveBid:
		if m.Tricks < 0 || m.Tricks > wire.MaxTricks {
			return nil, fmt.Errorf("wsclient: bid %d out of 0..%d", m.Tricks, wire.MaxTricks)
		}
		tc.Command = &gatewayv1.TableCommand_Bid{Bid: &tablev1.BidCommand{Tricks: uint32(m.Tricks)}}
	case MoveTrump:
		trump := commonv1.Suit_SUIT_NONE
		if m.Suit.Valid() {
			trump = cardpb.Suit(m.Suit)
		}
		tc.Command = &gatewayv1.TableCommand_Trump{Trump: &tablev1.ChooseTrumpCommand{Trump: trump}}
	case MovePlay:
		pc := &tablev1.PlayCardCommand{Card: cardpb.Card(m.Card)}
		if m.Joker != nil {
			d, err := wire.ParseJoker(*m.Joker)
			if err != nil {
				return nil, err
			}
			pc.Declaration = d
		}
		tc.Command = &gatewayv1.TableCommand_Play{Play: pc}
	default:
		return nil, fmt.Errorf("wsclient: no move to send")
	}
	return tc, nil
}

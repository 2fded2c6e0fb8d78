package runner

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/assign"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/services/table-runner/internal/table"
	"github.com/pulka/pulka/services/table-runner/internal/tablelog"
)

// DefaultCommandTrim is how many handled command entries a table leaves in
// its command stream before it trims them (a refusal or a hand boundary
// trims at once): the stream of a table stays at most this long plus what is
// unread, whatever a client sends.
const DefaultCommandTrim = 64

// handledScript, under the table's lease (the same fence as the fenced
// append): trims the command stream through the entry handled last, records
// that entry, and, for a refusal, rings the event stream's bell with the
// answer for its sender — a notice, not an entry (streams.NoticeBell).
// KEYS: lease, command stream, handled key, event stream (its bell);
// ARGV: owner, epoch, handled entry ID, trim threshold (the ID after it),
// notice ("" for none). Returns {entries trimmed, subscribers that heard the
// notice}.
//
// The trim comes before the answer, in one script: a client that was told
// its command was refused can never see it applied later by an owner that
// read the stream again after a restore.
var handledScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'owner', 'epoch')
if cur[1] ~= ARGV[1] or cur[2] ~= ARGV[2] then
  return redis.error_reply('STALEEPOCH lease is ' .. tostring(cur[2]) .. ':' .. tostring(cur[1]))
end
local trimmed = redis.call('XTRIM', KEYS[2], 'MINID', ARGV[4])
redis.call('SET', KEYS[3], ARGV[3])
local heard = 0
if ARGV[5] ~= '' then
  heard = redis.call('PUBLISH', KEYS[4], ARGV[5])
end
return {trimmed, heard}
`)

// nextID is the stream ID right after id: the threshold of an XTRIM MINID
// that removes id itself.
func nextID(id string) (string, error) {
	ms, seq, ok := strings.Cut(id, "-")
	n, err := strconv.ParseUint(seq, 10, 64)
	if !ok || err != nil {
		return "", fmt.Errorf("runner: bad stream ID %q", id)
	}
	if n == ^uint64(0) {
		m, err := strconv.ParseUint(ms, 10, 64)
		if err != nil {
			return "", fmt.Errorf("runner: bad stream ID %q", id)
		}
		return strconv.FormatUint(m+1, 10) + "-0", nil
	}
	return ms + "-" + strconv.FormatUint(n+1, 10), nil
}

// markHandled trims the command stream through the read position and
// records it (handledScript), ringing notice on the events' bell if it is
// not empty.
func (a *actor) markHandled(ctx context.Context, notice string) (heard int64, err error) {
	if a.readPos == "" {
		return 0, nil
	}
	next, err := nextID(a.readPos)
	if err != nil {
		return 0, err
	}
	id := a.s.id
	res, err := handledScript.Run(ctx, a.r.rdb,
		[]string{a.lease.Key, a.s.cmd, tablelog.HandledKey(id), streams.TableEvents(id)},
		a.lease.Owner, a.lease.Epoch, a.readPos, next, notice).Int64Slice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("reply %v", res)
	}
	if err != nil {
		if redis.HasErrorPrefix(err, "STALEEPOCH") {
			err = fmt.Errorf("%w: %w", streams.ErrStaleEpoch, err)
		}
		return 0, a.appendFailed(ctx, fmt.Errorf("runner: trim the commands of %s: %w", id, err))
	}
	a.handled, a.untrimmed = a.readPos, 0
	a.r.m.trimmed.Add(ctx, res[0])
	return res[1], nil
}

// trimSome trims the handled commands once there are CommandTrim of them
// (a hand's end trims them with its snapshot: snapshotHandled).
func (a *actor) trimSome(ctx context.Context) error {
	if a.readPos == a.handled {
		return nil
	}
	if a.untrimmed++; a.untrimmed < a.r.opt.CommandTrim {
		return nil
	}
	_, err := a.markHandled(ctx, "")
	return err
}

// refuse answers a refused command to its sender only: the MoveRejected
// goes out on the event stream's bell as a notice, which every gateway's hub
// hands to the sender's connections; nothing is appended to the log (the
// table did not change). A gateway that is not listening at that moment
// (restarting, reconnecting to Redis) loses the answer: the client sees
// none, as for a command lost in flight (docs/protocol.md).
func (a *actor) refuse(ctx context.Context, rej *table.RejectError) error {
	data, err := proto.Marshal(rej.Event)
	if err != nil {
		return err
	}
	heard, err := a.markHandled(ctx, streams.NoticeBell(data))
	if err != nil {
		return err
	}
	if heard == 0 {
		a.r.m.unheard.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", rej.Reason.String())))
	}
	return nil
}

// tableKeys are the keys of a table that outlive its game by the finished
// TTL (the lease is released, not expired).
func tableKeys(id string) []string {
	return []string{streams.TableEvents(id), streams.TableCommands(id), streams.TableSnapshot(id),
		assign.StartKey(id), streams.LeaseEpochKey(streams.TableLease(id)), tablelog.HandledKey(id)}
}

package ws

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/telemetry"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/apierr"
)

// command writes a table command to the table's command stream.
func (c *conn) command(ref, typ string, m *gatewayv1.TableCommand) error {
	table := m.GetTable()
	c.tablesMu.Lock()
	sub, joined := c.tables[table]
	c.tablesMu.Unlock()
	if !joined {
		return wire.Errorf(wire.CodeNotJoined, "join table %s before sending it commands", table)
	}
	if err := mayCommand(typ, sub); err != nil {
		return err
	}
	key := m.GetCmd()
	if key == "" {
		key = randomID()
	}
	pid := c.claims.PlayerID
	cmd, err := wire.Command(m, pid, wire.CommandID(pid, key))
	if err != nil {
		return err
	}
	ctx, span := c.s.deps.Tracer.Start(c.ctx, "ws "+typ, trace.WithSpanKind(trace.SpanKindProducer))
	defer span.End()
	if span.IsRecording() { // most spans are not sampled: spare them the attributes
		span.SetAttributes(attribute.String("table", table), attribute.String("command_id", cmd.CommandId))
	}
	if _, err := c.publish(ctx, cmd); err != nil {
		return err
	}
	// The table's events usually follow within milliseconds: the ack
	// waits for them (at most AckDelay) and leaves with them.
	c.sendLazy(wire.Ack(ref, cmd.CommandId))
	return nil
}

func (c *conn) publish(ctx context.Context, cmd *tablev1.Command) (string, error) {
	cmd.Trace = telemetry.TraceContextFrom(ctx)
	data, err := proto.Marshal(cmd)
	if err != nil {
		return "", err
	}
	// No timeout of its own: the Redis client's timeouts bound the write,
	// and the connection's end bounds the wait for a place in a batch.
	id, err := c.s.deps.Publisher.Publish(ctx, streams.Entry{Stream: streams.TableCommands(cmd.TableId), Data: data})
	if err != nil {
		return "", errors.Join(apierr.ErrUnavailable, err)
	}
	return id, nil
}

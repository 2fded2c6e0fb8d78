package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/redistest"
)

func TestWallet_OnlyAuditAndHopsAreSubcommands(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"wallet", "pay"}, nil, &out, &errOut)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != exitUsage {
		t.Fatalf("want a usage error, got %v", err)
	}
}

// Without a wallet service the audit times out with a clear error rather
// than hanging.
func TestWallet_AuditWithoutAWalletTimesOut(t *testing.T) {
	srv := redistest.Start(t)
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"wallet", "-redis", srv.Addr(), "-timeout", (300 * time.Millisecond).String(), "audit"}, nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "no reply from the wallet") {
		t.Fatalf("want a timeout, got %v", err)
	}
}

// On a Redis Cluster, -redis lists its nodes: the audit's command reaches
// the wallet's stream on whichever node owns it (a one-node client would get
// MOVED), and without a wallet it times out the same way.
func TestWallet_AuditOnAClusterReachesTheWalletsStream(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"wallet", "-redis", strings.Join(cl.Addrs(), ","), "-timeout", (300 * time.Millisecond).String(), "audit"}, nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "no reply from the wallet") {
		t.Fatalf("want a timeout, got %v", err)
	}
}

package daemon_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/redistest"
)

// startRedisProcess runs redis-server with args (a config file first, if
// any) until the test ends, once it accepts TCP connections on port.
func startRedisProcess(t *testing.T, port int, args ...string) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("no redis-server")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			_ = c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server %v did not listen on %d", args, port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func clientOf(t *testing.T, b daemon.Base) redis.UniversalClient {
	t.Helper()
	opts, err := b.RedisOptions()
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewUniversalClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// With redis-sentinel-master, redis-addr lists Sentinels: the client asks
// them for the master and writes there.
func TestRedisOptions_SentinelLeadsToTheMaster(t *testing.T) {
	master := redistest.Start(t)
	port := freePort(t)
	conf := filepath.Join(t.TempDir(), "sentinel.conf")
	body := fmt.Sprintf("port %d\nbind 127.0.0.1\nprotected-mode no\nsentinel monitor pulka 127.0.0.1 %d 1\n", port, master.Port())
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	startRedisProcess(t, port, conf, "--sentinel")
	b := daemon.Base{RedisAddr: "127.0.0.1:" + strconv.Itoa(port), RedisSentinelMaster: "pulka",
		AdminAddr: ":0", ShutdownTimeout: time.Second}
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	c := clientOf(t, b)
	ctx := context.Background()
	if err := c.Set(ctx, "via-sentinel", "yes", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got := master.Client(t).Get(ctx, "via-sentinel").Val(); got != "yes" {
		t.Fatalf("the master holds %q", got)
	}
	// A name the Sentinels do not watch finds no master.
	b.RedisSentinelMaster = "other"
	if err := clientOf(t, b).Ping(ctx).Err(); err == nil {
		t.Fatal("a master nobody watches answered")
	}
}

// writeCA makes a CA and a certificate it signs for dnsName; it returns the
// CA's PEM file and the certificate's and key's.
func writeCA(t *testing.T, dir, dnsName string) (caFile, certFile, keyFile string) {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, kind string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caKey, leafKey := key(), key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dnsName},
		DNSNames: []string{dnsName}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caTmpl, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(leafKey)
	if err != nil {
		t.Fatal(err)
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("cert.pem", "CERTIFICATE", leafDER), write("key.pem", "EC PRIVATE KEY", keyDER)
}

// With redis-tls the client speaks TLS and checks Redis' certificate
// against the CA file for the server name: the right CA and name connect,
// another CA or another name does not, and plain TCP is refused by a
// TLS-only Redis.
func TestRedisOptions_TLSChecksTheServersCertificate(t *testing.T) {
	dir := t.TempDir()
	ca, cert, key := writeCA(t, dir, "redis.pulka.test")
	otherCA, _, _ := writeCA(t, t.TempDir(), "redis.pulka.test")
	port := freePort(t)
	startRedisProcess(t, port, "--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--tls-cert-file", cert, "--tls-key-file", key, "--tls-ca-cert-file", ca, "--tls-auth-clients", "no",
		"--save", "", "--appendonly", "no")
	addr := "127.0.0.1:" + strconv.Itoa(port)
	ctx := context.Background()
	base := func(caFile, name string) daemon.Base {
		return daemon.Base{RedisAddr: addr, RedisTLS: true, RedisTLSCAFile: caFile, RedisTLSServerName: name,
			AdminAddr: ":0", ShutdownTimeout: time.Second}
	}
	good := base(ca, "redis.pulka.test")
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := clientOf(t, good).Ping(ctx).Err(); err != nil {
		t.Fatalf("TLS with the right CA: %v", err)
	}
	for name, b := range map[string]daemon.Base{
		"another CA":   base(otherCA, "redis.pulka.test"),
		"another name": base(ca, "elsewhere.test"),
		"plain TCP":    {RedisAddr: addr},
	} {
		c := clientOf(t, b)
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err := c.Ping(pctx).Err()
		cancel()
		if err == nil {
			t.Errorf("%s connected", name)
		}
	}
}

// With several addresses the daemon's client is a cluster client, and it
// finds a failed-over master's replica within seconds of the promotion
// (go-redis's own topology reload comes once a minute).
func TestRun_ClusterClientFollowsAFailover(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 1)
	addrs := cl.Addrs()
	cfg := daemon.Base{RedisAddr: strings.Join(addrs, ","), AdminAddr: "127.0.0.1:0", ShutdownTimeout: 5 * time.Second}
	err := daemon.Run(context.Background(), daemon.Options{Name: "t", Config: cfg, LogWriter: io.Discard},
		func(ctx context.Context, d *daemon.Daemon) error {
			if _, ok := d.Redis.(*redis.ClusterClient); !ok {
				return fmt.Errorf("client %T, want a cluster client", d.Redis)
			}
			if err := d.Redis.Set(ctx, "k", "v", 0).Err(); err != nil {
				return err
			}
			if _, _, err := cl.Failover(ctx, "k"); err != nil {
				return err
			}
			promoted := time.Now()
			for {
				err := d.Redis.Set(ctx, "k", "after", 0).Err()
				if err == nil {
					return nil
				}
				if time.Since(promoted) > 10*time.Second {
					return fmt.Errorf("no write 10s after the promotion: %w", err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	if err != nil {
		t.Fatal(err)
	}
}

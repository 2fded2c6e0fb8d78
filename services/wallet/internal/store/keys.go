package store

import (
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/walletclient"
)

func accountKey(a, suffix string) string {
	return streams.KeyPrefix + ":" + walletclient.AccountTag(a) + ":" + suffix
}

// accountKeys are the KEYS of every account script, in order.
func accountKeys(a string) []string {
	return []string{accountKey(a, "acct"), accountKey(a, "holds"), accountKey(a, "ops"), walletclient.LedgerStream(a)}
}

func potKey(t string) string { return streams.KeyPrefix + ":" + streams.TableTag(t) + ":wallet:pot" }
func holdersKey(t string) string {
	return streams.KeyPrefix + ":" + streams.TableTag(t) + ":wallet:holders"
}

// Patterns the audit scans for (SCAN MATCH; braces are literal there).
const (
	accountPattern = streams.KeyPrefix + ":{w:*}:acct"
	potPattern     = streams.KeyPrefix + ":{t:*}:wallet:pot"
)

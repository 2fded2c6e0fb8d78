// Package envnames names the environment variables of the service settings
// that something outside the service sets: pulka-local and the test harness
// (tools/stack), and, spelled in YAML, docker-compose.yml. Each service
// declares its flags with these names, so a name is written once, here; the
// settings every service shares are pkg/daemon's (EnvRedisAddr, ...), and a
// setting nobody outside the service sets is named in the service's own
// configuration package.
//
// A launcher names a process (a consumer in a group, a runner, a gateway
// instance), wires the gateway to its address and secret, and a test
// shortens the timers and lifts the per-address limits; those are the
// settings here.
package envnames

// The gateway's settings (services/gateway/internal/server).
const (
	// GatewayAddr is where the gateway serves HTTP and WebSockets.
	GatewayAddr = "PULKA_GATEWAY_ADDR"
	// SessionSecret signs sessions; read from the environment only (a flag
	// would show in ps).
	SessionSecret = "PULKA_SESSION_SECRET"
	// AllowedOrigins are the browser origins the gateway accepts.
	AllowedOrigins = "PULKA_ALLOWED_ORIGINS"
	// GatewayInstance names the gateway process (its reply stream, its
	// presence).
	GatewayInstance = "PULKA_INSTANCE"
	// PresenceBeat is how often a gateway says it is alive; one silent for
	// three beats is taken for dead.
	PresenceBeat = "PULKA_PRESENCE_BEAT"
	// The per-address and per-player limits (docs/limits.md, "Gateway").
	SignupsPerIP      = "PULKA_SIGNUPS_PER_IP"
	LoginPerIP        = "PULKA_LOGIN_PER_IP"
	LoginPerAccountIP = "PULKA_LOGIN_PER_ACCOUNT_IP"
	WSPerIP           = "PULKA_WS_PER_IP"
	WSPerPlayer       = "PULKA_WS_PER_PLAYER"
	ConnPerIP         = "PULKA_CONN_PER_IP"
	// WSRate and WSBurst bound the frames one WebSocket may send.
	WSRate  = "PULKA_WS_RATE"
	WSBurst = "PULKA_WS_BURST"
)

// The lobby's settings (services/lobby/internal/service).
const (
	// LobbyName is the lobby process's consumer name in its group.
	LobbyName = "PULKA_LOBBY_NAME"
	// LobbyCreatesPerMinute is how many tables one player may create per
	// minute (docs/limits.md, "Lobby"); a load test lifts it.
	LobbyCreatesPerMinute = "PULKA_LOBBY_CREATES_PER_MINUTE"
	// LobbyCommandsPerMinute is how many lobby commands of any kind one
	// player may send per minute, and LobbyCoinSitsPerMinute how many of
	// them may sit down at coin tables (docs/limits.md, "Lobby"); a load
	// test lifts them.
	LobbyCommandsPerMinute = "PULKA_LOBBY_COMMANDS_PER_MINUTE"
	LobbyCoinSitsPerMinute = "PULKA_LOBBY_COIN_SITS_PER_MINUTE"
)

// ConsumerSuffix follows a service's prefix in the name of its consumer
// name's variable (pkg/daemon's ConsumerGroup declares the group's settings
// under the prefix: GROUP, CONSUMER, RECLAIM_IDLE, MAX_DELIVERIES).
const ConsumerSuffix = "CONSUMER"

// The scoring service's settings (services/scoring/internal/scorer).
const (
	// ScoringPrefix starts the names of scoring's consumer group settings.
	ScoringPrefix = "PULKA_SCORING_"
	// ScoringConsumer is the scoring process's consumer name in its group.
	ScoringConsumer = ScoringPrefix + ConsumerSuffix
)

// The wallet's settings (services/wallet/internal/service).
const (
	// WalletPrefix starts the names of the wallet's consumer group settings.
	WalletPrefix = "PULKA_WALLET_"
	// WalletConsumer is the wallet process's consumer name in its group.
	WalletConsumer = WalletPrefix + ConsumerSuffix
)

// The table runner's settings (services/table-runner/internal/runner).
const (
	// RunnerID names the runner process: table owners and heartbeats carry it.
	RunnerID = "PULKA_RUNNER_ID"
	// The timers of a table whose settings leave them unset.
	RunnerMoveTimeout    = "PULKA_RUNNER_MOVE_TIMEOUT"
	RunnerReconnectGrace = "PULKA_RUNNER_RECONNECT_GRACE"
	RunnerBotDelay       = "PULKA_RUNNER_BOT_DELAY"
	RunnerSeedTimeout    = "PULKA_RUNNER_SEED_TIMEOUT"
	// The assignment's timers: how soon a dead runner's tables move.
	RunnerHeartbeatTTL      = "PULKA_RUNNER_HEARTBEAT_TTL"
	RunnerLeaseTTL          = "PULKA_RUNNER_LEASE_TTL"
	RunnerPollInterval      = "PULKA_RUNNER_POLL_INTERVAL"
	RunnerLeaderTTL         = "PULKA_RUNNER_LEADER_TTL"
	RunnerReconcileInterval = "PULKA_RUNNER_RECONCILE_INTERVAL"
	// RunnerCapacity is the most tables a runner takes; the operator sets
	// it from its pool's tablesPerRunner.
	RunnerCapacity = "PULKA_RUNNER_CAPACITY"
	// RunnerAssigner ("false") keeps a runner out of the assigner's
	// election: the operator sets it on its pods, since it assigns itself.
	RunnerAssigner = "PULKA_RUNNER_ASSIGNER"
)

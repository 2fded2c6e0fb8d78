module github.com/pulka/pulka/services/scoring

go 1.26.0

require (
	github.com/pulka/pulka/pkg v0.0.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/redis/go-redis/v9 v9.23.0 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

// The pkg module lives in this repository; go.work uses it too, the replace
// lets the module build on its own (a container build, go mod tidy).
replace github.com/pulka/pulka/pkg => ../../pkg

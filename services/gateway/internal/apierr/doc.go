// Package apierr is the one place where the gateway's domain errors become
// HTTP status codes and the error codes clients see, in JSON bodies
// ({"error":{"code":…,"message":…}}) and in WebSocket error frames.
package apierr

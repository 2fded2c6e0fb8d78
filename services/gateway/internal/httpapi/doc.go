// Package httpapi is the gateway's HTTP API under /api/v1 (gin): sessions
// (guest, register, log in, log out, me), the lobby (list with filters, read
// one table, create, sit with a password, stand, leave, fill with bots) and a
// player's finished games with their sheets. Errors are JSON bodies
// {"error":{"code":…,"message":…}} whose status comes from internal/apierr.
package httpapi

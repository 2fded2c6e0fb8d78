// Package domain is the lobby's pure core: table settings and their
// validation, and what each lobby command does to a table (seats, host,
// password, bots, the start). It does no I/O and reads no clock or random
// source: ids, times, seeds and password hashing are handed in, so every rule
// is tested without Redis.
//
// Refusals are errors that wrap one of the sentinel errors below (settings
// problems are a *SettingsError, which matches ErrInvalidSettings); Reason
// maps them to the wire's LobbyRejectReason.
package domain

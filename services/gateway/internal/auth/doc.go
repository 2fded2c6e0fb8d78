// Package auth is who a gateway client is: signed session tokens, guest
// identities, accounts with argon2id password hashes in Redis, and the login
// rate limits (per account and per IP) that are shared by every gateway
// instance because they live in Redis too.
package auth

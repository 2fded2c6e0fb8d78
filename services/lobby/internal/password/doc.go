// Package password hashes table passwords with argon2id and checks them.
//
// A table password is a low-value secret (it keeps strangers out of a private
// game), but players reuse passwords, so the lobby never stores one in the
// clear: Redis holds only the PHC-encoded argon2id hash
// ("$argon2id$v=19$m=…,t=…,p=…$salt$key"). The parameters travel inside the
// hash, so they can be raised later without breaking existing tables.
package password

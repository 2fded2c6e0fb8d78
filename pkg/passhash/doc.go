// Package passhash hashes passwords with argon2id and checks them: the one
// password hasher of Pulka, for players' account passwords (the gateway)
// and table passwords (the lobby).
//
// Players reuse passwords, so no service stores one in the clear: Redis
// holds only the PHC-encoded argon2id hash
// ("$argon2id$v=19$m=…,t=…,p=…$salt$key"). The parameters travel inside the
// hash, so they can be raised later without breaking what is stored; a
// stored hash that asks for more memory than maxMemoryKiB is refused rather
// than computed. How many hashes run at once is the caller's business (each
// costs MemoryKiB of memory): the gateway bounds them with slots, the lobby
// with a worker pool.
package passhash

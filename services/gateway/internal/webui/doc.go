// Package webui serves Pulka's browser client (web/, built by Vite into
// dist/app and embedded into the gateway binary).
//
// It is a single-page app: every path without a file of its own (/, /t/<id>,
// /lobby …) gets index.html and the client routes it. Vite names assets by
// their content hash, so files under /assets/ are cached for a year and never
// revalidated, while index.html — the one file that names the current assets
// — is never cached. Files built with a gzip twin (name.gz) are sent
// compressed to clients that accept it, which matters on phones.
//
// When the client has not been built, dist/ holds only README.txt and
// Handler serves a short page saying to run `make web`, so the gateway still
// builds and runs without Node.
package webui

// Package stack describes all of Pulka running as processes on one machine:
// which service programs there are, in which order they start, the settings
// that wire each process to Redis, to the others and to its own admin port,
// and when a process counts as ready. pulka-local runs the stack it plans for
// people; stacktest runs the same stack for tests.
//
// Adding a service is an edit here: its name in Services and, when its
// processes need names of their own (a consumer in a group), a case in
// Wiring.Process. The launcher, the test harness and the check that
// docker-compose.yml runs every service all follow.
package stack

// Package visibility decides which table events a client may receive
// (invariant 1: hidden information never leaves the server).
//
// Allows is the whole rule, a small pure function: public events go to every
// viewer, seat events only to the player who holds that seat at that moment,
// player events only to that player, and anything else — an unset audience,
// an unknown one, a missing visibility — to nobody (fail closed).
//
// Who holds a seat is itself derived from the event stream (Seats folds the
// seating events in stream order), so every gateway instance reaches the same
// answer from Redis alone.
package visibility

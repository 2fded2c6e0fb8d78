// Package scoring is the classic Joker score sheet (the purceli): the points
// written for each hand, and at the end of every pulka the premia, the moshla
// and the struck hand, with per-pulka and grand totals.
//
// Build is a pure function of the table's scoring settings and the bids and
// tricks of the hands played so far, so the scoring service, the table-runner,
// replays and the command line all compute the very same sheet, and a sheet
// can be rebuilt from the hand results at any time instead of being patched
// entry by entry. All arithmetic is in whole points; the /100 notation of the
// paper sheet (950 → "9.5") exists only at the edge, in FormatPoints.
//
// What the sheet cannot check: the dealer restriction (the four bids must not
// total the cards dealt). The sheet does not know who dealt, so that rule
// belongs to the rules engine that accepts the bids.
package scoring

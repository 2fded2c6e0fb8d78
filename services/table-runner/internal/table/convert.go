package table

import (
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

func public() *tablev1.Visibility {
	return &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PUBLIC}
}

func toSeat(s int) *tablev1.Visibility {
	return &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_SEAT, Seat: uint32(s)}
}

func toPlayer(p string) *tablev1.Visibility {
	return &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PLAYER, PlayerId: p}
}

package scoringclient

import "google.golang.org/protobuf/encoding/protowire"

// tableIDField is table_id's field number in both ScoringInput and
// FinalStandings (TestTableOf_FieldOfBothMessages holds them to it).
const tableIDField = 1

// TableOf reads the table_id of an encoded ScoringInput or FinalStandings
// without decoding the rest: what a consumer needs to order one stream's
// entries by table (streams.WithOrderKey) on its reading goroutine. ok is
// false when data is not such a message or has no table. A repeated field
// gives its first value (a decoder keeps the last; writers write it once).
func TableOf(data []byte) (table string, ok bool) {
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return "", false
		}
		data = data[n:]
		if num == tableIDField && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(data)
			if n < 0 || len(v) == 0 {
				return "", false
			}
			return string(v), true
		}
		n = protowire.ConsumeFieldValue(num, typ, data)
		if n < 0 {
			return "", false
		}
		data = data[n:]
	}
	return "", false
}

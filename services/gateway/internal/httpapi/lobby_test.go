package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/services/gateway/internal/apierr"
	"github.com/pulka/pulka/services/gateway/internal/auth"
	"github.com/pulka/pulka/services/gateway/internal/ports"
)

// recordingView is a lobby view that lists its tables and records every
// filter it is asked for, and whether it was asked at all.
type recordingView struct {
	tables   []*lobbyv1.TableSummary
	mu       sync.Mutex
	filters  []*lobbyv1.TableFilter
	versions int
}

var viewTables = []*lobbyv1.TableSummary{{TableId: "t3"}, {TableId: "t2"}, {TableId: "t1"}}

func (v *recordingView) List(f *lobbyv1.TableFilter) []*lobbyv1.TableSummary {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.filters = append(v.filters, proto.Clone(f).(*lobbyv1.TableFilter))
	return v.tables
}

func (v *recordingView) Version() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.versions++
	return 42
}

func (v *recordingView) calls() (filters []*lobbyv1.TableFilter, versions int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]*lobbyv1.TableFilter(nil), v.filters...), v.versions
}

func (v *recordingView) Get(string) (*lobbyv1.TableSummary, bool) { return nil, false }
func (v *recordingView) Page(f *lobbyv1.TableFilter, offset, limit int) ([]*lobbyv1.TableSummary, bool) {
	all := v.List(f)
	all = all[min(offset, len(all)):]
	return all[:min(limit, len(all))], len(all) > limit
}
func (v *recordingView) Fetch(context.Context, string) (*lobbyv1.TableSummary, error) {
	return nil, apierr.ErrNotFound
}
func (v *recordingView) Changed() <-chan struct{}                         { return make(chan struct{}) }
func (v *recordingView) Since(uint64) ([]ports.LobbyChange, uint64, bool) { return nil, 42, true }

type listAPI struct {
	url, token string
	view       *recordingView
}

func newListAPI(t *testing.T, tables ...*lobbyv1.TableSummary) *listAPI {
	t.Helper()
	gin.SetMode(gin.TestMode)
	signer, err := auth.NewSigner([]byte(strings.Repeat("k", auth.MinSecretLen)), nil, time.Hour, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := signer.Issue(auth.Claims{PlayerID: "ana", Name: "Ana"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) == 0 {
		tables = viewTables
	}
	view := &recordingView{tables: tables}
	engine := gin.New()
	if err := Mount(engine, Config{}, Deps{Signer: signer, View: view}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(engine)
	t.Cleanup(hs.Close)
	return &listAPI{url: hs.URL, token: tok, view: view}
}

type listAnswer struct {
	status  int
	version string
	body    struct {
		Tables []struct {
			TableID string `json:"table_id"`
		} `json:"tables"`
		NextPageToken string `json:"next_page_token"`
		Error         struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
}

// list asks GET /api/v1/tables?query with the session.
func (a *listAPI) list(t *testing.T, query string) listAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, a.url+"/api/v1/tables?"+query, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := listAnswer{status: resp.StatusCode, version: resp.Header.Get("X-Lobby-Version")}
	if err := json.Unmarshal(b, &out.body); err != nil {
		t.Fatalf("?%s: body %q is not JSON", query, b)
	}
	return out
}

// Every query parameter of the table list becomes its field of the filter
// the lobby view is asked with, and nothing else: an empty query is an
// empty filter.
func TestAPI_TablesListQueryBecomesTheFilter(t *testing.T) {
	a := newListAPI(t)
	type F = lobbyv1.TableFilter
	for _, tt := range []struct {
		query string
		want  *F
	}{
		{"", &F{}},
		{"game=classic", &F{Game: lobbyv1.Game_GAME_CLASSIC}},
		{"game=japanese", &F{Game: lobbyv1.Game_GAME_JAPANESE}},
		{"game=Japanese", &F{Game: lobbyv1.Game_GAME_JAPANESE}}, // enums ignore case
		{"game=", &F{}}, // empty: no filter
		{"variant=standard", &F{ClassicVariant: lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD}},
		{"variant=NINES", &F{ClassicVariant: lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES}},
		{"status=waiting", &F{Status: lobbyv1.TableStatus_TABLE_STATUS_WAITING}},
		{"status=playing", &F{Status: lobbyv1.TableStatus_TABLE_STATUS_PLAYING}},
		{"status=finished", &F{Status: lobbyv1.TableStatus_TABLE_STATUS_FINISHED}},
		{"free_seat=true", &F{HasFreeSeat: true}},
		{"free_seat=1", &F{HasFreeSeat: true}}, // strconv.ParseBool's spellings
		{"free_seat=false", &F{}},
		{"free_only=true", &F{FreeOnly: true}},
		{"free_only=TRUE", &F{FreeOnly: true}},
		{"free_only=0", &F{}},
		{"without_password=true", &F{WithoutPassword: true}},
		{"without_password=t", &F{WithoutPassword: true}},
		{"without_password=false", &F{}},
		{"max_stake=0", &F{}}, // zero does not filter
		{"max_stake=250", &F{MaxStake: 250}},
		{"max_stake=9223372036854775807", &F{MaxStake: 9223372036854775807}},
		{"page_size=1&page_token=1", &F{}},        // paging is not the filter's
		{"foo=bar&stake=5&free_seats=true", &F{}}, // unknown parameters are ignored
		{"game=classic&variant=nines&status=waiting&free_seat=true&free_only=true&without_password=true&max_stake=100",
			&F{Game: lobbyv1.Game_GAME_CLASSIC, ClassicVariant: lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES,
				Status: lobbyv1.TableStatus_TABLE_STATUS_WAITING, HasFreeSeat: true, FreeOnly: true, WithoutPassword: true, MaxStake: 100}},
	} {
		before, _ := a.view.calls()
		r := a.list(t, tt.query)
		if r.status != http.StatusOK || r.version != "42" {
			t.Fatalf("?%s: %d (X-Lobby-Version %q) %+v, want 200 with version 42", tt.query, r.status, r.version, r.body)
		}
		after, _ := a.view.calls()
		if len(after) != len(before)+1 {
			t.Fatalf("?%s: the view was asked %d times, want once", tt.query, len(after)-len(before))
		}
		if got := after[len(after)-1]; !proto.Equal(got, tt.want) {
			t.Fatalf("?%s: filter {%s}, want {%s}", tt.query, prototext.Format(got), prototext.Format(tt.want))
		}
	}
}

// A value a typed parameter cannot take is a 400 bad_request naming the
// parameter and the value, and the lobby view is not consulted.
func TestAPI_TablesListBadQueryIs400WithoutAskingTheLobby(t *testing.T) {
	a := newListAPI(t)
	for _, tt := range []struct{ query, mention string }{
		{"game=poker", `game="poker"`},
		{"game=POKER", `game="poker"`}, // reported as matched: lower case
		{"game=1", `game="1"`},         // enum numbers are not names
		{"variant=sevens", `variant="sevens"`},
		{"status=open", `status="open"`},
		{"free_seat=yes", `free_seat="yes"`},
		{"free_only=2", `free_only="2"`},
		{"without_password=on", `without_password="on"`},
		{"max_stake=abc", `max_stake="abc"`},
		{"max_stake=-1", `max_stake="-1"`},
		{"max_stake=1.5", `max_stake="1.5"`},
		{"max_stake=9223372036854775808", `max_stake="9223372036854775808"`}, // over int64
		{"page_size=0", `page_size="0"`},
		{"page_size=ten", `page_size="ten"`},
		{"page_token=-1", `page_token="-1"`},
		{"page_token=x", `page_token="x"`},
		// One bad parameter among good ones is enough.
		{"game=classic&without_password=true&max_stake=lots", `max_stake="lots"`},
	} {
		r := a.list(t, tt.query)
		if r.status != http.StatusBadRequest || r.body.Error.Code != "bad_request" || !strings.Contains(r.body.Error.Message, tt.mention) {
			t.Fatalf("?%s: %d %+v, want 400 bad_request mentioning %s", tt.query, r.status, r.body.Error, tt.mention)
		}
		if filters, versions := a.view.calls(); len(filters) != 0 || versions != 0 {
			t.Fatalf("?%s: the view was asked (%d lists, %d versions) for a bad query", tt.query, len(filters), versions)
		}
	}
}

// page_size bounds a page (DefaultTablePage by default, at most
// MaxTablePage) and page_token is the offset of the next one.
func TestAPI_TablesListPages(t *testing.T) {
	a := newListAPI(t)
	ids := func(r listAnswer) string {
		var s []string
		for _, tb := range r.body.Tables {
			s = append(s, tb.TableID)
		}
		return strings.Join(s, ",") + "|" + r.body.NextPageToken
	}
	for _, tt := range []struct{ query, want string }{
		{"", "t3,t2,t1|"},
		{"page_size=2", "t3,t2|2"},
		{"page_size=2&page_token=2", "t1|"},
		{"page_size=1&page_token=1", "t2|2"},
		{"page_token=3", "|"}, // past the end: an empty page
		{"page_token=1000", "|"},
	} {
		if r := a.list(t, tt.query); r.status != http.StatusOK || ids(r) != tt.want {
			t.Fatalf("?%s: %d %s, want %s", tt.query, r.status, ids(r), tt.want)
		}
	}

	many := make([]*lobbyv1.TableSummary, MaxTablePage+DefaultTablePage+1)
	for i := range many {
		many[i] = &lobbyv1.TableSummary{TableId: fmt.Sprintf("t%d", i)}
	}
	a = newListAPI(t, many...)
	for _, tt := range []struct {
		query string
		n     int
		next  string
	}{
		{"", DefaultTablePage, strconv.Itoa(DefaultTablePage)},
		{"page_size=100000", MaxTablePage, strconv.Itoa(MaxTablePage)}, // capped, not refused
		{fmt.Sprintf("page_size=%d&page_token=%d", MaxTablePage, MaxTablePage), DefaultTablePage + 1, ""},
	} {
		r := a.list(t, tt.query)
		if r.status != http.StatusOK || len(r.body.Tables) != tt.n || r.body.NextPageToken != tt.next {
			t.Fatalf("?%s of %d tables: %d, %d tables, next %q; want %d tables, next %q",
				tt.query, len(many), r.status, len(r.body.Tables), r.body.NextPageToken, tt.n, tt.next)
		}
	}
}

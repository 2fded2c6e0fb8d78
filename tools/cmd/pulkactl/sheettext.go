package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/scoring"
)

// textOptions shape the paper sheet.
type textOptions struct {
	names [classic.Seats]string
	color bool // ANSI colours: made green, missed amber, khishti red, struck through
}

func defaultNames() [classic.Seats]string {
	return [classic.Seats]string{"Seat 1", "Seat 2", "Seat 3", "Seat 4"}
}

// Marks written after a score, so the sheet reads without colour too.
const (
	markMissed  = "°"
	markKhishti = "!"
	markStruck  = "×"
)

const (
	cardsWidth = 5  // the left column: cards dealt
	bidWidth   = 3  // a seat's bid column
	scoreWidth = 7  // a seat's score, right-aligned, then up to two marks
	seatWidth  = 16 // bid + space + score + marks + gap
)

var pulkaNumerals = [classic.Pulkas]string{"I", "II", "III", "IV"}

const (
	ansiReset  = "\x1b[0m"
	ansiGreen  = "\x1b[32m"
	ansiAmber  = "\x1b[33m"
	ansiRed    = "\x1b[31m"
	ansiStrike = "\x1b[9m"
)

// writeSheetText writes the sheet the way it looks on paper: a row per hand
// with the cards dealt and each player's bid and score, a heading and a Σ line
// per pulka, the "sul" line and the foot. Scores in rows are whole points;
// Σ and sul lines use the /100 notation.
func writeSheetText(w io.Writer, sheet scoring.Sheet, opt textOptions) {
	var b bytes.Buffer
	t := sheetText{b: &b, opt: opt}

	t.pad("", cardsWidth+1)
	for seat, name := range opt.names {
		t.cell(truncate(name, seatWidth-1), seatWidth, t.nameColor(sheet, seat))
	}
	b.WriteByte('\n')
	t.pad("cards", cardsWidth+1)
	for range classic.Seats {
		t.pad(fmt.Sprintf("%*s %*s", bidWidth, "bid", scoreWidth, "score"), seatWidth)
	}
	b.WriteByte('\n')

	for _, p := range sheet.Pulkas {
		t.writePulka(sheet, p)
	}

	b.WriteString(strings.Repeat("─", cardsWidth+1+classic.Seats*seatWidth))
	b.WriteByte('\n')
	t.pad("sul", cardsWidth+1)
	for seat, total := range sheet.Total {
		color := ""
		if sheet.Settings.Premia && !sheet.Finished {
			color = ansiRed
			if sheet.OnCourse[seat] {
				color = ansiGreen
			}
		}
		t.cell(fmt.Sprintf("%*s", bidWidth+1+scoreWidth, scoring.FormatPoints(total)), seatWidth, color)
	}
	b.WriteByte('\n')
	b.WriteByte('\n')
	b.WriteString(footer(sheet))
	b.WriteString("marks: " + markMissed + " missed  " + markKhishti + " khishti  " +
		markStruck + " struck by a moshla; a pass is bid as -\n")
	_, _ = w.Write(trimLines(b.Bytes()))
}

type sheetText struct {
	b   *bytes.Buffer
	opt textOptions
}

func (t sheetText) writePulka(sheet scoring.Sheet, p scoring.PulkaTotals) {
	state := "finished"
	if !p.Finished {
		state = fmt.Sprintf("in progress, %d of %d hands", p.Played, p.Size)
	}
	fmt.Fprintf(t.b, "Pulka %s (%s)\n", pulkaNumerals[p.Index], state)
	for h := p.First; h < p.First+p.Played; h++ {
		row := sheet.Hands[h]
		t.pad(fmt.Sprintf("%*d", cardsWidth, row.Cards), cardsWidth+1)
		for seat := range classic.Seats {
			bid := "-"
			if row.Bids[seat] > 0 {
				bid = fmt.Sprint(row.Bids[seat])
			}
			mark, color := "", ansiGreen
			switch row.Result[seat] {
			case scoring.ResultMissed:
				mark, color = markMissed, ansiAmber
			case scoring.ResultKhishti:
				mark, color = markKhishti, ansiRed
			}
			if row.Struck[seat] {
				mark += markStruck
				color += ansiStrike
			}
			score := fmt.Sprintf("%*d", scoreWidth, row.Points[seat])
			t.pad(fmt.Sprintf("%*s ", bidWidth, bid), bidWidth+1)
			t.cell(score, scoreWidth, color)
			t.pad(mark, seatWidth-bidWidth-1-scoreWidth)
		}
		t.b.WriteByte('\n')
	}

	t.pad("  Σ", cardsWidth+1)
	for seat := range classic.Seats {
		s := scoring.FormatPoints(p.Total[seat])
		switch {
		case p.Premia[seat] > 0:
			s += " (+" + scoring.FormatPoints(p.Premia[seat]) + ")"
		case p.Moshla[seat] < 0:
			s += " (" + scoring.FormatPoints(p.Moshla[seat]) + ")"
		}
		t.pad(fmt.Sprintf("%*s", bidWidth+1+scoreWidth, s), seatWidth)
	}
	t.b.WriteByte('\n')
	if !p.Finished && sheet.Settings.Premia {
		var on []string
		for seat, ok := range p.OnCourse {
			if ok {
				on = append(on, t.opt.names[seat])
			}
		}
		if len(on) == 0 {
			on = []string{"nobody"}
		}
		fmt.Fprintf(t.b, "  on course for the premia: %s\n", strings.Join(on, ", "))
	}
}

// pad writes s left-aligned in width columns (runes, not bytes: Σ and the
// marks are one column wide each).
func (t sheetText) pad(s string, width int) {
	t.b.WriteString(s)
	if n := width - len([]rune(s)); n > 0 {
		t.b.WriteString(strings.Repeat(" ", n))
	}
}

// cell is pad with an optional colour around the text (not the padding, so
// a strike-through covers only the number).
func (t sheetText) cell(s string, width int, color string) {
	if !t.opt.color || color == "" {
		t.pad(s, width)
		return
	}
	t.b.WriteString(color + s + ansiReset)
	t.pad("", width-len([]rune(s)))
}

// nameColor is the header colour of a seat: red once it missed a hand of the
// current pulka, while there is a premia to be on course for.
func (t sheetText) nameColor(sheet scoring.Sheet, seat int) string {
	if sheet.Settings.Premia && !sheet.Finished && !sheet.OnCourse[seat] {
		return ansiRed
	}
	return ""
}

// footer is the sheet's foot: the variant, the hand being played and the
// scoring settings, so a -200 never leaves anyone wondering why.
func footer(sheet scoring.Sheet) string {
	s := sheet.Settings
	v := s.Variant
	hand := "game over"
	if !sheet.Finished {
		n := v.CardsInHand(sheet.Next)
		cards := "cards"
		if n == 1 {
			cards = "card"
		}
		hand = fmt.Sprintf("hand %d of %d (%d %s, pulka %s)",
			sheet.Next+1, v.Hands(), n, cards, pulkaNumerals[v.PulkaOf(sheet.Next)])
	}
	khishti := "khishti " + s.Khishti.String()
	if s.Khishti == scoring.KhishtiPerCard {
		khishti += " (100 × cards)"
	}
	premia := "premia off"
	if s.Premia {
		premia = "premia on"
	}
	moshla := "moshla off"
	switch {
	case s.Moshla && s.RestDocked:
		moshla = "moshla on, rest docked"
	case s.Moshla:
		moshla = "moshla on, rest not docked"
	}
	return fmt.Sprintf("%s · %s · %s · %s · %s\n", v, hand, khishti, premia, moshla)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// trimLines drops the padding at the ends of lines.
func trimLines(b []byte) []byte {
	lines := bytes.Split(b, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, " ")
	}
	return bytes.Join(lines, []byte("\n"))
}

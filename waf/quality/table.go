package quality

import (
	"slices"
	"strconv"
	"strings"
)

// CRSAttackCategories are the CRS categories summed in the "attack
// categories" row (CRS 930–934, 941, 942, 944; 943 session fixation has its
// own row and per-category floor).
var CRSAttackCategories = []string{"sqli", "xss", "lfi", "rfi", "rce", "php", "java", "generic"}

// Total sums rows of one file, optionally restricted to categories (for
// benign: sources).
func Total(rows []Row, file string, cats ...string) Row {
	t := Row{File: file, Category: "all"}
	for _, r := range rows {
		if r.File != file {
			continue
		}
		if len(cats) > 0 && !slices.Contains(cats, r.Category) {
			continue
		}
		for p := range t.Parts {
			t.Parts[p].add(r.Parts[p])
		}
	}
	return t
}

// Find returns the row of file and category in rows.
func Find(rows []Row, file, cat string) (Row, bool) {
	for _, r := range rows {
		if r.File == file && r.Category == cat {
			return r, true
		}
	}
	return Row{}, false
}

// Markdown renders the quality table: per row, the tune and check parts at
// paranoia 1 (the operator default) and 2, the gap between the parts at
// PL1, and Coraza+CRS on the check lines. pl2 may be nil.
func Markdown(pl1, pl2 []Row) string {
	var b strings.Builder
	b.WriteString("| corpus | category | lines tune / check | PL1 tune | PL1 check | PL1 gap | PL2 tune | PL2 check | Coraza PL1 check | Coraza PL2 check |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	row := func(r1 Row, label string, r2 Row, ok2 bool) {
		digits := 1
		if r1.File == "benign" {
			digits = 2
		}
		t, c := r1.Parts[Tune], r1.Parts[Check]
		b.WriteString("| " + r1.File + " | " + label + " | " + strconv.Itoa(t.Lines) + " / " + strconv.Itoa(c.Lines) +
			" | " + pct(t.Blocked, t.Lines, digits) + " | " + pct(c.Blocked, c.Lines, digits) +
			" | " + strconv.FormatFloat(r1.Gap(), 'f', digits, 64))
		if ok2 {
			b.WriteString(" | " + pct(r2.Parts[Tune].Blocked, r2.Parts[Tune].Lines, digits) + " | " + pct(r2.Parts[Check].Blocked, r2.Parts[Check].Lines, digits))
		} else {
			b.WriteString(" | – | –")
		}
		if c.Coraza == 0 {
			b.WriteString(" | – | – |\n")
			return
		}
		b.WriteString(" | " + pct(c.CorazaPL1, c.Coraza, digits) + " | " + pct(c.CorazaPL2, c.Coraza, digits) + " |\n")
	}
	for _, f := range Files {
		for _, r := range pl1 {
			if r.File == f {
				r2, ok := Find(pl2, f, r.Category)
				row(r, r.Category, r2, ok)
			}
		}
		total := func(label string, cats ...string) {
			row(Total(pl1, f, cats...), label, Total(pl2, f, cats...), pl2 != nil)
		}
		switch f {
		case "crs":
			total("**attack categories**", CRSAttackCategories...)
			total("**all block lines**")
		case "benign":
			total("**all benign**")
		case "attacks":
			total("**all**")
		}
	}
	return b.String()
}

func pct(n, d, digits int) string {
	return strconv.Itoa(n) + " (" + strconv.FormatFloat(Pct(n, d), 'f', digits, 64) + " %)"
}

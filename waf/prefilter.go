package waf

import (
	"errors"
	"fmt"

	"edge/waf/internal/ahocorasick"
)

// automaton is a prefilter automaton (package ahocorasick) and what the
// evaluation knows of it: whether scanning an empty form with it finds a
// trigger key (markEmptyTriggers).
type automaton struct {
	ahocorasick.Matcher
	// emptyTrig: scanning an empty value finds a trigger key (value
	// boundary keys); when false an empty form triggers nothing.
	emptyTrig bool
}

// newAutomaton builds the automaton of the prefilter patterns ps.
func newAutomaton(ps []ahocorasick.Pattern) (*automaton, error) {
	m, err := ahocorasick.Build(ps)
	if errors.Is(err, ahocorasick.ErrTooManyStates) {
		return nil, fmt.Errorf("waf: the rules' prefilter literals make an automaton of more than %d states", ahocorasick.MaxStates)
	}
	if err != nil {
		return nil, fmt.Errorf("waf: prefilter automaton: %w", err)
	}
	return &automaton{Matcher: *m}, nil
}

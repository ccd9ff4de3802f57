package waf

// WithoutPrefilter exposes withoutPrefilter to the external corpus test.
func WithoutPrefilter(rs *RuleSet) *RuleSet { return rs.withoutPrefilter() }

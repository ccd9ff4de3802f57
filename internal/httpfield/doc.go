// Package httpfield holds the small RFC 9110 field-value helpers that several of edge's header
// parsers share: qvalues, tokens, optional white space and ASCII case folding. Each function
// works on strings without allocating.
package httpfield

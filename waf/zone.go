package waf

import (
	"bytes"
	"strings"
)

// zone is where in a request a value was found.
type zone uint8

const (
	zoneNone zone = iota
	zoneMethod
	zonePath
	zonePathRaw
	zoneURI
	zoneQuery
	zoneProto
	zoneQueryArg
	zoneQueryArgName
	zoneForm
	zoneFormName
	zoneJSON
	zoneJSONKey
	zoneMultipart
	zoneMultipartName
	zoneFilename
	zoneHeader
	zoneHeaderName
	zoneCookie
	zoneCookieName
	zoneBody
	zoneXML
	zoneGraphQL
	zoneJA4
	zoneJA3Hash
	zoneTLSGroup
	zoneClientIP
	zoneFPClass
	zoneUAMismatch
	zoneGeoCountry
	zoneGeoASN
	zoneRequest
	numZones
)

var zoneNames = [numZones]string{
	zoneNone: "", zoneMethod: "method", zonePath: "path", zonePathRaw: "path_raw", zoneURI: "uri",
	zoneQuery: "query", zoneProto: "proto", zoneQueryArg: "query_arg", zoneQueryArgName: "query_arg_name",
	zoneForm: "form", zoneFormName: "form_name", zoneJSON: "json", zoneJSONKey: "json_key",
	zoneMultipart: "multipart", zoneMultipartName: "multipart_name", zoneFilename: "filename",
	zoneHeader: "header", zoneHeaderName: "header_name", zoneCookie: "cookie", zoneCookieName: "cookie_name",
	zoneBody: "body", zoneXML: "xml", zoneGraphQL: "graphql", zoneJA4: "tls.ja4", zoneJA3Hash: "tls.ja3_hash",
	zoneTLSGroup: "tls.group", zoneClientIP: "client.ip", zoneFPClass: "fingerprint.class",
	zoneUAMismatch: "fingerprint.ua_mismatch", zoneGeoCountry: "geo.country", zoneGeoASN: "geo.asn",
	zoneRequest: "request",
}

// String returns the zone's target name.
func (z zone) String() string { return zoneNames[z] }

type zoneMask uint64

func maskOf(zs ...zone) zoneMask {
	var m zoneMask
	for _, z := range zs {
		m |= 1 << z
	}
	return m
}

// targetGroups maps rule-file target names to zone sets. A target may also
// be written "group:name" to select values by (case-insensitive) name.
var targetGroups = map[string]zoneMask{
	"args": maskOf(zoneQueryArg, zoneForm, zoneJSON, zoneMultipart),
	"inputs": maskOf(zoneQueryArg, zoneForm, zoneJSON, zoneMultipart, zoneQueryArgName, zoneFormName,
		zoneJSONKey, zoneMultipartName, zoneCookie, zoneCookieName, zoneHeader, zoneFilename, zoneGraphQL),
	"args_names":              maskOf(zoneQueryArgName, zoneFormName, zoneJSONKey, zoneMultipartName),
	"headers":                 maskOf(zoneHeader),
	"custom_headers":          maskOf(zoneHeader), // custom headers only (targetSpec.custom)
	"header":                  maskOf(zoneHeader),
	"cookies":                 maskOf(zoneCookie),
	"cookie":                  maskOf(zoneCookie),
	"files":                   maskOf(zoneFilename),
	"body_args":               maskOf(zoneForm, zoneJSON, zoneMultipart),
	"query_args":              maskOf(zoneQueryArg),
	"query_arg_names":         maskOf(zoneQueryArgName),
	"form":                    maskOf(zoneForm),
	"form_names":              maskOf(zoneFormName),
	"json":                    maskOf(zoneJSON),
	"json_keys":               maskOf(zoneJSONKey),
	"multipart":               maskOf(zoneMultipart),
	"multipart_names":         maskOf(zoneMultipartName),
	"header_names":            maskOf(zoneHeaderName),
	"cookie_names":            maskOf(zoneCookieName),
	"body":                    maskOf(zoneBody),
	"xml":                     maskOf(zoneXML),
	"graphql":                 maskOf(zoneGraphQL),
	"method":                  maskOf(zoneMethod),
	"path":                    maskOf(zonePath),
	"path_raw":                maskOf(zonePathRaw),
	"uri":                     maskOf(zoneURI),
	"query":                   maskOf(zoneQuery),
	"proto":                   maskOf(zoneProto),
	"tls.ja4":                 maskOf(zoneJA4),
	"tls.ja3_hash":            maskOf(zoneJA3Hash),
	"tls.group":               maskOf(zoneTLSGroup),
	"client.ip":               maskOf(zoneClientIP),
	"fingerprint.class":       maskOf(zoneFPClass),
	"fingerprint.ua_mismatch": maskOf(zoneUAMismatch),
	"geo.country":             maskOf(zoneGeoCountry),
	"geo.asn":                 maskOf(zoneGeoASN),
	"request":                 maskOf(zoneRequest),
}

// parseTargetSpec parses "args", "args:q" or "header:User-Agent" into a zone
// mask and a lower-case name ("" for any).
func parseTargetMask(s string) (zoneMask, string, bool) {
	group, name, _ := strings.Cut(s, ":")
	m, ok := targetGroups[group]
	if !ok {
		return 0, "", false
	}
	return m, strings.ToLower(name), true
}

// slot selects the rules, chains and automaton that inspect a value. It is
// the value's zone (slot(z), same number), except that header values are
// split three ways by name (headerSlot): structural headers (protocol
// plumbing, which the "inputs" rules skip) and an application's custom
// headers (which "custom_headers" reads) have slots of their own past the
// zones, and the other headers keep the header zone's slot.
type slot uint8

const (
	slotHeader       = slot(zoneHeader) // a standard header: the header zone's own slot
	slotStructural   = slot(numZones)
	slotCustomHeader = slotStructural + 1 // an application's own header (headerSlot)
	numSlots         = slotCustomHeader + 1
)

// zoneOf returns the zone of the values of slot sl.
func zoneOf(sl slot) zone {
	if sl >= slotStructural {
		return zoneHeader
	}
	return zone(sl)
}

// headerSlot returns the slot of a header value: structural, standard (the
// header zone's own) or custom.
func headerSlot(name []byte) slot {
	var buf [40]byte
	if len(name) > len(buf) {
		return slotCustomHeader // no standard name is that long
	}
	return headerSlotLower(lowerInto(buf[:0], name))
}

// headerSlotLower is headerSlot of a lower-case name.
func headerSlotLower(h []byte) slot {
	switch {
	case structuralName(h):
		return slotStructural
	case standardName(h):
		return slotHeader
	}
	return slotCustomHeader
}

// standardName reports a lower-case header name that is standard or common
// infrastructure but not protocol plumbing (structuralName). Any other
// header is an application's own (X-Search, Api-Filter), whose values the
// "custom_headers" target group inspects like arguments. User-Agent,
// Referer, Origin and the proxy headers are standard: their values have
// shapes of their own.
func standardName(h []byte) bool {
	if bytes.HasPrefix(h, []byte("sec-")) || bytes.HasPrefix(h, []byte("access-control-request-")) {
		return true
	}
	switch string(h) {
	case "user-agent", "referer", "origin", "via", "forwarded", "x-forwarded-for", "x-forwarded-host",
		"x-forwarded-proto", "x-forwarded-port", "x-real-ip", "x-requested-with", "content-encoding",
		"content-language", "content-range", "content-md5", "content-disposition", "expect", "max-forwards",
		"from", "if-unmodified-since", "request-range", "accept-ranges", "purpose", "save-data", "early-data",
		"traceparent", "tracestate", "baggage", "x-request-id", "x-correlation-id", "proxy-authorization",
		"x-csrf-token", "x-xsrf-token", "x-http-method-override", "device-memory", "viewport-width",
		"downlink", "ect", "rtt", "width", "dpr":
		return true
	}
	return false
}

// structuralName reports lower-case header names whose values are protocol
// plumbing; the "inputs" target group skips them (Cookie is inspected as
// parsed cookies).
func structuralName(h []byte) bool {
	switch string(h) {
	case "cookie", "accept", "accept-encoding", "accept-language", "accept-charset", "connection",
		"content-length", "cache-control", "pragma", "upgrade-insecure-requests", "keep-alive",
		"proxy-connection", "te", "dnt", "priority", "if-modified-since", "if-none-match",
		"sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest", "sec-fetch-user", "sec-ch-ua",
		"sec-ch-ua-mobile", "sec-ch-ua-platform", "content-type", "multipart-header", "transfer-encoding",
		"authorization", "if-match", "range", "if-range", "upgrade", "host":
		return true
	}
	return false
}

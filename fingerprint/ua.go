package fingerprint

import "strings"

// UA families returned by UAFamily.
const (
	FamilyChrome  = "chrome"
	FamilyFirefox = "firefox"
	FamilySafari  = "safari"
	FamilyEdge    = "edge"
	FamilyOpera   = "opera"
	FamilyIE      = "ie"
)

// uaRule is one browser token, checked in order: tokens of derived browsers
// (Edge and Opera carry "Chrome/", Chrome carries "Safari/") come first.
type uaRule struct {
	token  string
	family string
}

var uaRules = [...]uaRule{
	{"Edg/", FamilyEdge},
	{"EdgA/", FamilyEdge},
	{"EdgiOS/", FamilyEdge},
	{"Edge/", FamilyEdge},
	{"OPR/", FamilyOpera},
	{"Opera/", FamilyOpera},
	{"OPiOS/", FamilyOpera},
	{"Firefox/", FamilyFirefox},
	{"FxiOS/", FamilyFirefox},
	{"CriOS/", FamilyChrome},
	{"Chrome/", FamilyChrome},
	{"Chromium/", FamilyChrome},
	{"Trident/", FamilyIE},
	{"MSIE ", FamilyIE},
	{"Safari/", FamilySafari},
}

// uaNotBrowser are tokens of tools that put browser words in their
// User-Agent; such a UA is not a browser claim.
var uaNotBrowser = [...]string{"bot", "Bot", "crawler", "Crawler", "spider", "Spider", "HeadlessChrome", "Lighthouse"}

// UAFamily returns the browser family a User-Agent claims: "chrome",
// "firefox", "safari", "edge", "opera" or "ie", or "" when the UA does not
// claim to be a browser (curl, python-requests, Go-http-client, declared
// bots and headless tools). Only a UA starting with "Mozilla/" or "Opera/"
// is a browser claim. It does not allocate.
func UAFamily(ua string) string {
	if !strings.HasPrefix(ua, "Mozilla/") && !strings.HasPrefix(ua, "Opera/") {
		return ""
	}
	for _, t := range uaNotBrowser {
		if strings.Contains(ua, t) {
			return ""
		}
	}
	for _, r := range uaRules {
		if strings.Contains(ua, r.token) {
			return r.family
		}
	}
	return ""
}

// UAMismatch reports whether ua claims a browser while the connection's
// fingerprint is classified as a library, bot or scanner (the ua_mismatch
// signal). Malicious is left out on purpose: such a fingerprint is already
// acted on by its own database action. An unknown class never mismatches.
func UAMismatch(ua string, class Class) bool {
	switch class {
	case ClassLibrary, ClassBot, ClassScanner:
		return UAFamily(ua) != ""
	}
	return false
}

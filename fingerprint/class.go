package fingerprint

import "errors"

// Class is what a fingerprint database says a client is.
type Class uint8

// Classes, in the order of the database format (doc.go).
const (
	ClassUnknown   Class = iota // not in the database
	ClassBrowser                // a web browser
	ClassLibrary                // an HTTP/TLS library or command-line tool
	ClassBot                    // an automated client (crawler, monitor)
	ClassScanner                // a vulnerability or port scanner
	ClassMalicious              // known-bad tooling (malware, attack frameworks)
)

var classNames = [...]string{"unknown", "browser", "library", "bot", "scanner", "malicious"}

// String returns the database spelling of c.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "unknown"
}

// ParseClass parses a database class name; "unknown" is not accepted.
func ParseClass(s string) (Class, error) {
	for i, n := range classNames[1:] {
		if s == n {
			return Class(i + 1), nil
		}
	}
	return ClassUnknown, errors.New("class must be browser, library, bot, scanner or malicious")
}

// Action is what the edge should do with a connection whose fingerprint
// matched a database entry. The root maps it to a response.
type Action uint8

// Actions, from mildest to strictest.
const (
	ActionNone  Action = iota // no entry matched
	ActionAllow               // explicitly fine
	ActionFlag                // log and expose to the WAF, do not interfere
	ActionLimit               // apply the stricter rate-limit tier
	ActionBlock               // refuse the request
)

var actionNames = [...]string{"none", "allow", "flag", "limit", "block"}

// String returns the database spelling of a.
func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "none"
}

// ParseAction parses a database action name; "none" is not accepted.
func ParseAction(s string) (Action, error) {
	for i, n := range actionNames[1:] {
		if s == n {
			return Action(i + 1), nil
		}
	}
	return ActionNone, errors.New("action must be allow, flag, limit or block")
}

package geoip

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/oschwald/maxminddb-golang/v2"
)

// MaxDBBytes bounds a database file: the largest MaxMind City databases are under half of it.
const MaxDBBytes = 256 << 20

// MaxCachedRecords bounds each database's cache of decoded records. A country database has a few
// hundred distinct records and an ASN database tens of thousands; records past the bound are decoded
// on every lookup (and allocate), never stored.
const MaxCachedRecords = 1 << 17

// Info is what the databases say about one address. The zero value means unknown.
type Info struct {
	// Country is the ISO 3166-1 alpha-2 code, upper case ("DE"); "" when unknown.
	Country string
	// ASN is the autonomous system number; 0 when unknown.
	ASN uint32
	// ASOrg is the autonomous system's organisation; "" when unknown.
	ASOrg string
}

// DB is a pair of opened databases, either of which may be absent.
type DB struct {
	country *reader[string]
	asn     *reader[asnRecord]
}

type asnRecord struct {
	num uint32
	org string
}

// Source is one database file's bytes and the name it is reported under.
type Source struct {
	Name string
	Data []byte
}

// Open opens the country and ASN databases; a Source with nil Data is absent. Each database is
// verified in full (search tree, data section, metadata) and must answer with records of the
// expected shape, so a corrupt or mismatched file is an error here, not at lookup time.
func Open(country, asn Source) (*DB, error) {
	db := &DB{}
	var err error
	if country.Data != nil {
		if db.country, err = openReader(country, decodeCountry); err != nil {
			return nil, err
		}
	}
	if asn.Data != nil {
		if db.asn, err = openReader(asn, decodeASN); err != nil {
			return nil, err
		}
	}
	return db, nil
}

// Merge returns a DB with country's country database and asn's ASN database (either may be nil),
// so the two files can be opened, and their errors reported, separately.
func Merge(country, asn *DB) *DB {
	db := &DB{}
	if country != nil {
		db.country = country.country
	}
	if asn != nil {
		db.asn = asn.asn
	}
	return db
}

// ReadFile reads a database file, refusing one larger than MaxDBBytes.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxDBBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxDBBytes {
		return nil, fmt.Errorf("geoip: %s: larger than %d bytes", path, MaxDBBytes)
	}
	return data, nil
}

// Lookup returns what the databases say about addr. A nil DB, an invalid address or an address
// neither database knows returns the zero Info.
func (db *DB) Lookup(addr netip.Addr) Info {
	var in Info
	if db == nil || !addr.IsValid() {
		return in
	}
	addr = addr.Unmap().WithZone("")
	if db.country != nil {
		in.Country, _ = db.country.lookup(addr)
	}
	if db.asn != nil {
		r, _ := db.asn.lookup(addr)
		in.ASN, in.ASOrg = r.num, r.org
	}
	return in
}

// HasCountry reports whether a country database is open.
func (db *DB) HasCountry() bool { return db != nil && db.country != nil }

// HasASN reports whether an ASN database is open.
func (db *DB) HasASN() bool { return db != nil && db.asn != nil }

// BuildTimes returns the build times of the country and ASN databases (zero for an absent one).
func (db *DB) BuildTimes() (country, asn time.Time) {
	if db == nil {
		return
	}
	if db.country != nil {
		country = db.country.r.Metadata.BuildTime()
	}
	if db.asn != nil {
		asn = db.asn.r.Metadata.BuildTime()
	}
	return country, asn
}

// Describe names the open databases with their type and build time, for logs.
func (db *DB) Describe() []string {
	var out []string
	for _, r := range []interface{ describe() string }{db.country, db.asn} {
		if r != nil {
			out = append(out, r.describe())
		}
	}
	return out
}

// reader is one opened database with its cache of decoded records by data offset.
type reader[T any] struct {
	name   string
	r      *maxminddb.Reader
	decode func(maxminddb.Result) (T, error)

	mu    sync.RWMutex
	cache map[uintptr]T
}

func openReader[T any](src Source, decode func(maxminddb.Result) (T, error)) (*reader[T], error) {
	r, err := maxminddb.OpenBytes(src.Data)
	if err != nil {
		return nil, fmt.Errorf("geoip: %s: %w", src.Name, err)
	}
	if err := r.Verify(); err != nil {
		return nil, fmt.Errorf("geoip: %s: %w", src.Name, err)
	}
	rd := &reader[T]{name: src.Name, r: r, decode: decode, cache: make(map[uintptr]T)}
	if err := rd.probe(); err != nil {
		return nil, fmt.Errorf("geoip: %s: %w", src.Name, err)
	}
	return rd, nil
}

// errNoRecords reports a database whose records decode to nothing of the expected shape.
var errNoRecords = errors.New("no record has the expected fields (a country database needs country.iso_code, an ASN database autonomous_system_number)")

// probe decodes the records of a sample of networks and fails when none has the expected shape: an
// ASN database given as country_db (or the reverse) is refused at load.
func (rd *reader[T]) probe() error {
	var zero T
	seen := 0
	for res := range rd.r.Networks() {
		if err := res.Err(); err != nil {
			return err
		}
		v, err := rd.decode(res)
		if err != nil {
			return err
		}
		if any(v) != any(zero) {
			return nil
		}
		if seen++; seen == 64 {
			break
		}
	}
	if seen == 0 {
		return nil // an empty database answers "unknown" for everyone, which is its content
	}
	return errNoRecords
}

func (rd *reader[T]) describe() string {
	m := rd.r.Metadata
	return rd.name + " (" + m.DatabaseType + ", built " + m.BuildTime().UTC().Format("2006-01-02") + ")"
}

// lookup returns the record for addr and whether one was found.
func (rd *reader[T]) lookup(addr netip.Addr) (T, bool) {
	var zero T
	res := rd.r.Lookup(addr)
	if res.Err() != nil || !res.Found() {
		return zero, false
	}
	off := res.Offset()
	rd.mu.RLock()
	v, ok := rd.cache[off]
	n := len(rd.cache)
	rd.mu.RUnlock()
	if ok {
		return v, true
	}
	v, err := rd.decode(res)
	if err != nil {
		return zero, false
	}
	if n < MaxCachedRecords {
		rd.mu.Lock()
		if len(rd.cache) < MaxCachedRecords {
			rd.cache[off] = v
		}
		rd.mu.Unlock()
	}
	return v, true
}

// countryRecord is the part of a country (or City) record edge reads.
type countryRecord struct {
	Country struct {
		ISOCode string `maxminddb:"iso_code"`
	} `maxminddb:"country"`
	Registered struct {
		ISOCode string `maxminddb:"iso_code"`
	} `maxminddb:"registered_country"`
}

func decodeCountry(res maxminddb.Result) (string, error) {
	var rec countryRecord
	if err := res.Decode(&rec); err != nil {
		return "", err
	}
	code := rec.Country.ISOCode
	if code == "" {
		code = rec.Registered.ISOCode
	}
	if !validCountry(code) {
		return "", nil
	}
	return code, nil
}

type asnFields struct {
	Number uint32 `maxminddb:"autonomous_system_number"`
	Org    string `maxminddb:"autonomous_system_organization"`
}

func decodeASN(res maxminddb.Result) (asnRecord, error) {
	var rec asnFields
	if err := res.Decode(&rec); err != nil {
		return asnRecord{}, err
	}
	return asnRecord{num: rec.Number, org: rec.Org}, nil
}

// validCountry reports whether s is two upper-case ASCII letters: anything else in a database is
// treated as unknown, so the value is safe in logs, keys and headers.
func validCountry(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

// ValidCountry reports whether s is an ISO 3166-1 alpha-2 code as Info.Country holds one: two
// upper-case ASCII letters. Configuration uses it to check country lists.
func ValidCountry(s string) bool { return validCountry(s) }

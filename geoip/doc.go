// Package geoip maps a client address to its country and its network (autonomous system number and
// organisation) from MaxMind-format databases (the MaxMind DB format, read with
// github.com/oschwald/maxminddb-golang/v2): a country database (GeoLite2-Country, GeoIP2-Country or
// a City database, read for country.iso_code, falling back to registered_country.iso_code) and an
// ASN database (GeoLite2-ASN: autonomous_system_number, autonomous_system_organization).
//
// # Where it sits
//
// The root opens the databases with the rest of the data files ([geoip] country_db, asn_db), and
// looks each request's client address up once, before routing: the result (an [Info]) is a plain
// value the root hands to route matching, network rules, the rate limiter's keys, the WAF's
// geo.country and geo.asn targets, the access log and the status page.
//
// # Cost
//
// A lookup walks the database's search tree (about 32 steps for IPv4, at most 128 for IPv6) and then
// reads the record at the offset it found. Records are shared by many networks (one per country, one
// per autonomous system), so decoded records are cached by offset, up to [MaxCachedRecords] per
// database: a lookup whose record is cached does not allocate. The root also keeps the answer per
// connection, since the address of a connection does not change.
//
// # Concurrency and reload
//
// A [DB] is immutable once opened and safe for concurrent use; its record cache takes a read lock.
// Reloading means opening the files again and swapping the pointer (the root owns that, with the
// configuration snapshot); a file that does not open keeps the previous DB serving.
package geoip

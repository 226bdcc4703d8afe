// Added for the embedded gateway (see embedded-db/README.md): indexes on a declared terms
// field (an array of strings). SQLite cannot index the elements of a JSON array, so such an
// index is a table of its keys, one row per element of the array (the element in the array
// field's column, the other key fields' SQL values beside it) and the document's `_id`,
// written by triggers on the collection's table in the statement that writes the document,
// as MongoDB writes a multikey index's keys with the document. exact.go pushes a membership
// condition on the field as a search of that table.

package metadata

import (
	"context"
	"fmt"
	"strings"

	"github.com/FerretDB/FerretDB/internal/util/fsql"
	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
)

// TermsIndex is an index of a declared collection with one declared terms field, whose
// other fields are declared scalars (or `_id`): the one shape kept as a table of keys.
type TermsIndex struct {
	Index IndexInfo
	Field int    // position of the terms field in Index.Key
	Table string // the keys' table
}

// TermsIndexOf returns the keys' table of index on the collection table tableName, if it has
// that shape.
func TermsIndexOf(tableName string, index IndexInfo, declared map[string]ScalarType) (*TermsIndex, bool) {
	if declared == nil || index.Unique {
		return nil, false
	}

	field := -1

	for i, key := range index.Key {
		switch t, ok := declared[key.Field]; {
		case ok && t == ScalarTerms:
			if field >= 0 {
				return nil, false // MongoDB refuses two arrays in one index key, so no store asks
			}

			field = i
		case ok, key.Field == "_id":
		default:
			return nil, false
		}
	}

	if field < 0 {
		return nil, false
	}

	return &TermsIndex{Index: index, Field: field, Table: tableName + "_" + index.Name + "_keys"}, true
}

// TermsColumn is the keys' table column of the index's i-th key field.
func TermsColumn(i int) string {
	return fmt.Sprintf("k%d", i)
}

// TermsDocColumn holds the document's `_id` as IDColumn reads it (its JSON text), so a
// condition `IDColumn IN (SELECT doc ...)` is a search of the `_id` index.
const TermsDocColumn = "doc"

// createSQL is the index SQLite keeps for it: on the keys' table, every key column and then
// the document (what indexCreateSQL returns for it, so rebuildStaleIndexes compares it).
func (t *TermsIndex) createSQL(tableName string) string {
	columns := make([]string, 0, len(t.Index.Key)+1)

	for i, key := range t.Index.Key {
		c := TermsColumn(i)
		if key.Descending {
			c += " DESC"
		}

		columns = append(columns, c)
	}

	columns = append(columns, TermsDocColumn)

	return fmt.Sprintf("CREATE UNIQUE INDEX %q ON %q (%s)", tableName+"_"+t.Index.Name, t.Table, strings.Join(columns, ", "))
}

// keysSelect selects the keys of the document row (NEW or OLD, or the table itself).
func (t *TermsIndex) keysSelect(row string) string {
	values := make([]string, 0, len(t.Index.Key)+1)

	for i, key := range t.Index.Key {
		if i == t.Field {
			values = append(values, "j.value")
			continue
		}

		values = append(values, row+"."+ScalarColumn(key.Field))
	}

	values = append(values, row+"."+DefaultColumn+`->'$._id'`)

	return fmt.Sprintf(
		"SELECT DISTINCT %s FROM json_each(%s.%s, '$.%s') AS j WHERE j.type = 'text'",
		strings.Join(values, ", "), row, DefaultColumn, t.Index.Key[t.Field].Field,
	)
}

func (t *TermsIndex) triggerNames() []string {
	return []string{t.Table + "_insert", t.Table + "_update", t.Table + "_delete"}
}

// createStatements create the keys' table, its indexes and triggers, and fill it from the
// documents already stored.
func (t *TermsIndex) createStatements(tableName string) []string {
	columns := make([]string, 0, len(t.Index.Key)+1)
	for i := range t.Index.Key {
		columns = append(columns, TermsColumn(i))
	}

	columns = append(columns, TermsDocColumn)
	list := strings.Join(columns, ", ")
	insert := fmt.Sprintf("INSERT OR IGNORE INTO %q (%s) ", t.Table, list)
	remove := fmt.Sprintf("DELETE FROM %q WHERE %s = OLD.%s->'$._id';", t.Table, TermsDocColumn, DefaultColumn)
	names := t.triggerNames()

	return []string{
		fmt.Sprintf("CREATE TABLE %q (%s)", t.Table, list),
		t.createSQL(tableName),
		fmt.Sprintf("CREATE INDEX %q ON %q (%s)", t.Table+"_doc", t.Table, TermsDocColumn),
		fmt.Sprintf("CREATE TRIGGER %q AFTER INSERT ON %q BEGIN %s; END", names[0], tableName, insert+t.keysSelect("NEW")),
		fmt.Sprintf("CREATE TRIGGER %q AFTER UPDATE ON %q BEGIN %s %s; END", names[1], tableName, remove, insert+t.keysSelect("NEW")),
		fmt.Sprintf("CREATE TRIGGER %q AFTER DELETE ON %q BEGIN %s END", names[2], tableName, remove),
		insert + strings.Replace(t.keysSelect(fmt.Sprintf("%q", tableName)), "FROM json_each", fmt.Sprintf("FROM %q, json_each", tableName), 1),
	}
}

// dropStatements remove the keys' table (with its indexes) and its triggers.
func (t *TermsIndex) dropStatements() []string {
	res := make([]string, 0, 4)
	for _, name := range t.triggerNames() {
		res = append(res, fmt.Sprintf("DROP TRIGGER IF EXISTS %q", name))
	}

	return append(res, fmt.Sprintf("DROP TABLE IF EXISTS %q", t.Table))
}

// statistics are the keys' table's lines in sqlite_stat1: the index's own (ten keys a
// document) and the `_id` one's.
func (t *TermsIndex) statistics(tableName string, declared map[string]ScalarType) [][3]string {
	index, ok := indexStatistics(t.Index, declared)
	if !ok {
		return nil
	}

	parts := strings.Fields(index)
	parts[0] = "10000000"

	return [][3]string{
		{t.Table, tableName + "_" + t.Index.Name, strings.Join(parts, " ") + " 1"},
		{t.Table, t.Table + "_doc", "10000000 10"},
	}
}

// dropTermsIndex removes what createIndex made for a terms index (nothing for another).
func dropTermsIndex(ctx context.Context, db *fsql.DB, c *Collection, index IndexInfo) error {
	t, ok := TermsIndexOf(c.TableName, index, ScalarFields(c.Name))
	if !ok {
		return nil
	}

	for _, q := range t.dropStatements() {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return lazyerrors.Error(err)
		}
	}

	return nil
}

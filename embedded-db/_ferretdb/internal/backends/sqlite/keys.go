// Added for the embedded gateway (see embedded-db/README.md): queries a terms index's keys
// answer whole.

package sqlite

import (
	"fmt"
	"strings"

	"github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/iterator"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// keysQuery selects, from terms indexes' keys alone, the `_id`s of the documents a filter
// matches, with the sort's values: every condition of the filter and every sort field is a
// column of those keys (metadata/terms.go). Each document has one key per distinct term,
// and every column but the term holds the document's own value, so the rows of one
// document that match are equal once the term is left out, and UNION (or INTERSECT, for
// all of several terms) leaves one row per document.
type keysQuery struct {
	// selects is the compound SELECT of `doc` and the sort's columns (s0, s1, ...).
	selects string
	args    []any
	orderBy string // " ORDER BY s0 DESC, ..." or ""

	// counts is the compound SELECT of `doc` alone, for a count.
	counts    string
	countArgs []any

	// firsts is selects as a UNION of one SELECT per term, each in its index's order, when
	// no condition needs all of several terms (an INTERSECT): the first documents of the
	// union are among each one's first (firstSQL). Nil otherwise.
	firsts []keysPart
}

// keysPart is one SELECT of a compound and its arguments.
type keysPart struct {
	sql  string
	args []any
}

// firstSQL selects the `doc`s of the first `limit` documents in the sort's order. From
// firsts, each term's SELECT stops at `limit` in its index's order, so a frequent term
// costs what a rare one does (without, UNION and ORDER BY put every key of the terms in
// temporary b-trees: 22,000 for a word of one fact in five at 100,000 facts).
func (k *keysQuery) firstSQL(limit int64) (string, []any) {
	if k.firsts == nil {
		return "SELECT doc FROM (" + k.selects + ")" + k.orderBy + " LIMIT ?", append(append([]any{}, k.args...), limit)
	}

	parts := make([]string, len(k.firsts))
	var args []any

	for i, p := range k.firsts {
		parts[i] = "SELECT * FROM (" + p.sql + k.orderBy + " LIMIT ?)"
		args = append(append(args, p.args...), limit)
	}

	return "SELECT doc FROM (" + strings.Join(parts, " UNION ") + ")" + k.orderBy + " LIMIT ?", append(args, limit)
}

// countSQL counts the documents.
func (k *keysQuery) countSQL() string {
	return "SELECT COUNT(*) FROM (" + k.counts + ")"
}

// limitedCount turns `SELECT COUNT(*) FROM <rest>` into a count of at most limit rows.
func limitedCount(q string, args []any, limit int64) (string, []any) {
	rest := strings.TrimPrefix(q, "SELECT COUNT(*) FROM ")

	return "SELECT COUNT(*) FROM (SELECT 1 FROM " + rest + " LIMIT ?)", append(append([]any{}, args...), limit)
}

// limitedWhere is the query's WHERE when its terms indexes' keys answer it whole: the
// `limit` first documents they select in the sort's order, and nothing else. The keys hold
// every condition (as countSQL counts them), so the documents read are those returned; the
// full condition again would list every document holding the terms (the handler filters
// the returned documents once more in Go all the same).
func (e *exact) limitedWhere(limit int64) (string, []any) {
	if !e.keysLimit(limit) {
		return e.where, e.args
	}

	first, args := e.keys.firstSQL(limit)

	return fmt.Sprintf(" WHERE %s IN (%s)", metadata.IDColumn, first), args
}

// keysLimit tells whether the keys give the query's first `limit` documents (limitedWhere).
func (e *exact) keysLimit(limit int64) bool {
	return e.keys != nil && e.sorted && limit != 0 && e.keys.orderBy != ""
}

// filterClause is one condition of a filter's top level (or of a top-level `$and`).
type filterClause struct {
	key   string
	value any
}

// topLevelClauses flattens filter's top level and top-level `$and`s.
func topLevelClauses(filter *types.Document) ([]filterClause, bool) {
	var res []filterClause

	for _, key := range filter.Keys() {
		value := must.NotFail(filter.Get(key))

		if key != "$and" {
			res = append(res, filterClause{key, value})
			continue
		}

		clauses, ok := value.(*types.Array)
		if !ok || clauses.Len() == 0 {
			return nil, false
		}

		for i := 0; i < clauses.Len(); i++ {
			clause, ok := must.NotFail(clauses.Get(i)).(*types.Document)
			if !ok {
				return nil, false
			}

			nested, ok := topLevelClauses(clause)
			if !ok {
				return nil, false
			}

			res = append(res, nested...)
		}
	}

	return res, true
}

// termsBranch is one terms condition: the field, its terms, and whether it needs all.
type termsBranch struct {
	field string
	terms []string
	all   bool
}

// termsBranchOf reads `"t"`, `{$eq: "t"}`, `{$in: [t...]}` or `{$all: [t...]}` (non-empty).
func termsBranchOf(field string, value any) (termsBranch, bool) {
	b := termsBranch{field: field}

	var list []any

	switch v := value.(type) {
	case string:
		list = []any{v}
	case *types.Document:
		if v.Len() != 1 {
			return b, false
		}

		op := v.Keys()[0]
		operand := must.NotFail(v.Get(op))

		switch op {
		case "$eq":
			list = []any{operand}
		case "$in", "$all":
			arr, ok := operand.(*types.Array)
			if !ok || arr.Len() == 0 {
				return b, false
			}

			list = must.NotFail(iterator.ConsumeValues(arr.Iterator()))
			b.all = op == "$all"
		default:
			return b, false
		}
	default:
		return b, false
	}

	for _, term := range list {
		s, ok := term.(string)
		if !ok {
			return b, false
		}

		b.terms = append(b.terms, s)
	}

	return b, true
}

// coveredKeys returns the keys query of a filter that is one terms condition (on one terms
// field, or an `$or` of terms conditions on several) and conditions on fields that, with the
// sort's, are all columns of a terms index of each field: recall's candidates and the
// lists' `q`, with their views, cursors and sorts.
func (scope *exactScope) coveredKeys(filter, sort *types.Document) (*keysQuery, bool) {
	clauses, ok := topLevelClauses(filter)
	if !ok {
		return nil, false
	}

	var branches []termsBranch

	var rest []filterClause

	for _, c := range clauses {
		if scope.declared[c.key] == metadata.ScalarTerms {
			b, ok := termsBranchOf(c.key, c.value)
			if !ok || branches != nil {
				return nil, false
			}

			branches = []termsBranch{b}

			continue
		}

		if c.key == "$or" && branches == nil {
			if or, ok := scope.termsOr(c.value); ok {
				branches = or
				continue
			}
		}

		rest = append(rest, c)
	}

	if branches == nil {
		return nil, false
	}

	var sortKeys []string
	if sort != nil {
		sortKeys = sort.Keys()
	}

	var selects, counts []string
	var args, countArgs []any
	var firsts []keysPart

	termByTerm := true

	for _, b := range branches {
		t, columns, ok := scope.keysIndexFor(b.field, rest, sortKeys)
		if !ok {
			return nil, false
		}

		sub := &exactScope{declared: scope.declared, columns: columns}

		var conditions []string
		var conditionArgs []any

		for _, c := range rest {
			part, a, ok := exactFilter(must.NotFail(types.NewDocument(c.key, c.value)), sub)
			if !ok {
				return nil, false
			}

			if part != "" {
				conditions, conditionArgs = append(conditions, part), append(conditionArgs, a...)
			}
		}

		condition := strings.Join(conditions, " AND ")

		selected := []string{metadata.TermsDocColumn}
		for i, key := range sortKeys {
			selected = append(selected, fmt.Sprintf("%s AS s%d", columns[key], i))
		}

		one := func(columnsList string, terms []string) (string, []any) {
			a := append([]any{}, conditionArgs...)
			for _, term := range terms {
				a = append(a, term)
			}

			where := inList(metadata.TermsColumn(t.Field), len(terms))
			if condition != "" {
				where = condition + " AND " + where
			}

			return fmt.Sprintf("SELECT %s FROM %q WHERE %s", columnsList, t.Table, where), a
		}

		groups := [][]string{b.terms}
		if b.all {
			groups = nil
			for _, term := range b.terms {
				groups = append(groups, []string{term})
			}
		}

		var parts, countParts []string

		for _, g := range groups {
			q, a := one(strings.Join(selected, ", "), g)
			parts, args = append(parts, q), append(args, a...)

			// A document has a key for each of the terms it holds: a lone SELECT of several
			// needs DISTINCT to count it once (a compound already does).
			counted := metadata.TermsDocColumn
			if len(g) > 1 && len(branches) == 1 {
				counted = "DISTINCT " + counted
			}

			q, a = one(counted, g)
			countParts, countArgs = append(countParts, q), append(countArgs, a...)
		}

		selects = append(selects, strings.Join(parts, " INTERSECT "))
		counts = append(counts, strings.Join(countParts, " INTERSECT "))

		if b.all && len(b.terms) > 1 {
			termByTerm = false
			continue
		}

		for _, term := range b.terms {
			q, a := one(strings.Join(selected, ", "), []string{term})
			firsts = append(firsts, keysPart{q, a})
		}
	}

	if !termByTerm {
		firsts = nil
	}

	if len(branches) > 1 {
		for i := range selects {
			selects[i] = "SELECT * FROM (" + selects[i] + ")"
			counts[i] = "SELECT * FROM (" + counts[i] + ")"
		}
	}

	res := &keysQuery{
		selects:   strings.Join(selects, " UNION "),
		args:      args,
		counts:    strings.Join(counts, " UNION "),
		countArgs: countArgs,
		firsts:    firsts,
	}

	if len(sortKeys) > 0 {
		order := make([]string, len(sortKeys))

		for i, key := range sortKeys {
			order[i] = fmt.Sprintf("s%d", i)
			if must.NotFail(sort.Get(key)) == int64(-1) {
				order[i] += " DESC"
			}
		}

		res.orderBy = " ORDER BY " + strings.Join(order, ", ")
	}

	return res, true
}

// termsOr reads an `$or` whose every branch is one terms condition.
func (scope *exactScope) termsOr(value any) ([]termsBranch, bool) {
	arr, ok := value.(*types.Array)
	if !ok || arr.Len() == 0 {
		return nil, false
	}

	var res []termsBranch

	for i := 0; i < arr.Len(); i++ {
		d, ok := must.NotFail(arr.Get(i)).(*types.Document)
		if !ok || d.Len() != 1 {
			return nil, false
		}

		key := d.Keys()[0]
		if scope.declared[key] != metadata.ScalarTerms {
			return nil, false
		}

		b, ok := termsBranchOf(key, must.NotFail(d.Get(key)))
		if !ok || b.all {
			return nil, false
		}

		res = append(res, b)
	}

	return res, true
}

// keysIndexFor is a terms index on field whose key holds every field `rest` and the sort
// name, and the key column of each.
func (scope *exactScope) keysIndexFor(field string, rest []filterClause, sortKeys []string) (*metadata.TermsIndex, map[string]string, bool) {
	for _, t := range scope.terms {
		if t.Index.Key[t.Field].Field != field {
			continue
		}

		columns := map[string]string{}
		for i, k := range t.Index.Key {
			if i != t.Field {
				columns[k.Field] = metadata.TermsColumn(i)
			}
		}

		covered := true

		keys := append([]string{}, sortKeys...)
		for _, c := range rest {
			keys = append(keys, c.key)
		}

		for _, key := range keys {
			if strings.HasPrefix(key, "$") {
				continue // `$or` of conditions: checked when translated
			}

			if _, ok := columns[key]; !ok {
				covered = false
				break
			}
		}

		if covered {
			return t, columns, true
		}
	}

	return nil, nil, false
}

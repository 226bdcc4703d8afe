import {
  type FieldNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  getNamedType,
  isObjectType,
} from 'graphql';
import { type DocumentReads, documentReads } from '../store/documentReads.js';
import { concreteTypes, walkSelections } from './selectionWalk.js';

/**
 * Reading what the selection asks for. A type whose values are stored documents (a fact,
 * an entity) declares what every value of it carries whatever is selected (`always`:
 * what its isTypeOf and the loaders read), and each of its fields declares which document
 * fields its resolver reads (`reads`; an exposed field reads the field it exposes). The
 * field that loads such documents passes `selectedReads(info)` to the store, which then
 * reads the union of what the selected fields declare, and nothing else.
 *
 * A field with no declaration makes its selection read the whole document: an answer is
 * never missing a value because a declaration was forgotten. The schema walk
 * (test/graphql/selectedReads.test.ts) fails on such a field, and a property test compares
 * answers read this way with answers read whole.
 */

const ALWAYS = 'documentReadsAlways';
const READS = 'documentReads';

/** The declarations for a document type `Doc`: on its type, and on each of its fields. */
export function documentFields<Doc>() {
  type Field = keyof Doc & string;
  return {
    /** On the type: what every value carries, whatever is selected. */
    always: (...fields: Field[]) => ({ extensions: { [ALWAYS]: fields } }),
    /** On a field: the document fields its resolver reads. */
    reads: (...fields: Field[]) => ({ extensions: { [READS]: fields } }),
  };
}

type Extensions = Readonly<Record<string, unknown>> | null | undefined;

/** What the type declares every value carries; undefined for a type read whole. */
function alwaysReadOf(type: GraphQLNamedType): readonly string[] | undefined {
  return (type.extensions as Extensions)?.[ALWAYS] as readonly string[] | undefined;
}

/** What the field declares it reads (an exposed field: what it exposes); undefined: nothing declared. */
function declaredReadsOf(field: GraphQLField<unknown, unknown>): readonly string[] | undefined {
  const extensions = field.extensions as Extensions;
  const declared = extensions?.[READS] as readonly string[] | undefined;
  if (declared) return declared;
  const exposed = extensions?.pothosExposedField;
  return typeof exposed === 'string' ? [exposed] : undefined;
}

/**
 * What the selection below a field reads of the `type` documents it answers with: the
 * fields selected on `type` (through connections, edges and fragments; not below a nested
 * document, which its own field reads), each field's declaration, and the type's `always`.
 * @skip and @include count as included, so the answer holds for any variables. Null: read
 * the whole document (a selected field declares nothing).
 */
export function readsOfSelection(
  info: Pick<GraphQLResolveInfo, 'schema' | 'fragments'>,
  fieldNodes: readonly FieldNode[],
  returned: readonly GraphQLObjectType[],
  type: GraphQLObjectType,
): DocumentReads | null {
  const always = alwaysReadOf(type);
  if (!always) return null;
  const fields = new Set<string>(always);
  let whole = false;
  const walk = {
    schema: info.schema,
    fragment: (name: string) => info.fragments[name],
    variables: {},
    visit: (on: GraphQLObjectType, field: GraphQLField<unknown, unknown>) => {
      if (on === type) {
        const declared = declaredReadsOf(field);
        if (declared) for (const f of declared) fields.add(f);
        else whole = true;
        return false;
      }
      // A document of another stored type is read by its own field.
      return alwaysReadOf(on) === undefined;
    },
  };
  for (const node of fieldNodes) {
    if (node.selectionSet) walkSelections(walk, node.selectionSet, returned);
  }
  return whole ? null : documentReads(fields);
}

/** By the field's nodes: the same selection always reads the same fields. */
const cached = new WeakMap<object, DocumentReads | null>();

/**
 * What the field being resolved must read of each `typeName` document it answers with (a
 * fact, a list of facts, a connection of entities). Null when the
 * field's documents are read whole. Worked out once per selection in the document.
 */
export function selectedReads(info: GraphQLResolveInfo, typeName: string): DocumentReads | null {
  // One node is the common case, and the same node object whatever executes it; merged
  // nodes (the same field selected twice) are keyed by their array.
  const key = info.fieldNodes.length === 1 ? info.fieldNodes[0]! : info.fieldNodes;
  let reads = cached.get(key);
  if (reads === undefined) {
    const type = info.schema.getType(typeName);
    const returned = concreteTypes(info.schema, getNamedType(info.returnType));
    reads = isObjectType(type) ? readsOfSelection(info, info.fieldNodes, returned, type) : null;
    cached.set(key, reads);
  }
  return reads;
}

/** What the schema declares for reading by selection, and what it fails to declare. */
export interface ReadDeclarations {
  /** The types read by selection (those declaring `always`), by name. */
  types: string[];
  /** How many of their fields declare what they read. */
  declared: number;
  /** `Type.field` of each field of such a type that declares nothing. */
  undeclared: string[];
}

/**
 * Walks every object type of the schema: the fields of types read by selection must
 * declare their reads.
 * @internal the walk test/graphql/selectedReads.test.ts runs over the schema.
 */
export function readDeclarations(schema: GraphQLSchema): ReadDeclarations {
  const found: ReadDeclarations = { types: [], declared: 0, undeclared: [] };
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || !alwaysReadOf(type)) continue;
    found.types.push(type.name);
    for (const field of Object.values(type.getFields()) as GraphQLField<unknown, unknown>[]) {
      if (declaredReadsOf(field)) found.declared++;
      else found.undeclared.push(`${type.name}.${field.name}`);
    }
  }
  return found;
}

/*
 * What a query's plan says about the relations it reads, for paimon_sql/spark/pushdown.py: the ids
 * of the attributes it references, and per relation its output and the condition of a Filter right
 * above it. The same facts were read from the plans' JSON (TreeNode.toJSON), whose reflection over
 * every node's constructor took ~45 ms for a MERGE's plan of ~25 KB, twice per statement; walking
 * the plans here takes well under a millisecond.
 *
 * Referenced: every AttributeReference in a node's fields other than its children, nested plans
 * (subqueries) and non-child expression fields (an OuterReference's) included, and every output of
 * a relation no Project, Aggregate or Expand above narrows: what the JSON's attributes were.
 */
package paimon_sql.spark;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Expand;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.trees.TreeNode;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.execution.QueryExecution;

public final class PlanNeeds {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The instance Python loads by name, to call {@link #of} on. */
    public PlanNeeds() {
    }

    /**
     * {@code {"referenced": [ids], "relations": [[[[id, name], ...], condition or null], ...]}}: the
     * attribute ids {@code ds}'s analyzed plan references, and (when {@code filters}; else none) per
     * relation of its optimized plan its output and the condition of the Filter right above it, as
     * {@code {"class", "_children", "exprId": {"id"}, "name", "value", "dataType"}} trees.
     */
    public String of(Dataset<Row> ds, boolean filters) throws JsonProcessingException {
        QueryExecution qe = ds.queryExecution();
        Set<Long> referenced = new LinkedHashSet<>();
        walk(qe.analyzed(), null, false, referenced, null);
        List<Object> relations = new ArrayList<>();
        if (filters) {
            walk(qe.optimizedPlan(), null, false, null, relations);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("referenced", referenced);
        out.put("relations", relations);
        return JSON.writeValueAsString(out);
    }

    /** The ids of the output of {@code ds}'s analyzed plan, in order (a stand-in's columns). */
    public String outputIds(Dataset<Row> ds) throws JsonProcessingException {
        List<Long> ids = new ArrayList<>();
        scala.collection.Iterator<Attribute> output = ds.queryExecution().analyzed().output().iterator();
        while (output.hasNext()) {
            ids.add(output.next().exprId().id());
        }
        return JSON.writeValueAsString(ids);
    }

    private static void walk(LogicalPlan node, LogicalPlan parent, boolean narrowed, Set<Long> referenced,
                             List<Object> relations) throws JsonProcessingException {
        if (node.children().isEmpty() && !node.output().isEmpty()) {
            List<Object> outputs = new ArrayList<>();
            scala.collection.Iterator<Attribute> it = node.output().iterator();
            while (it.hasNext()) {
                Attribute a = it.next();
                outputs.add(List.of(a.exprId().id(), a.name()));
                if (referenced != null && !narrowed) {
                    referenced.add(a.exprId().id());
                }
            }
            if (relations != null) {
                List<Object> relation = new ArrayList<>();
                relation.add(outputs);
                relation.add(parent instanceof Filter f ? expression(f.condition()) : null);
                relations.add(relation);
            }
            return;
        }
        if (referenced != null) {
            fields(node, referenced);
        }
        boolean narrows = narrowed || node instanceof Project || node instanceof Aggregate || node instanceof Expand;
        scala.collection.Iterator<LogicalPlan> kids = node.children().iterator();
        while (kids.hasNext()) {
            walk(kids.next(), node, narrows, referenced, relations);
        }
    }

    /** Whether {@code field} is a non-empty collection of the node's children (its child list). */
    private static boolean allChildren(Object field, Map<Object, Boolean> children) {
        if (!(field instanceof scala.collection.Iterable<?> items) || items.isEmpty()) {
            return false;
        }
        scala.collection.Iterator<?> it = items.iterator();
        while (it.hasNext()) {
            if (!children.containsKey(it.next())) {
                return false;
            }
        }
        return true;
    }

    /** The ids of every AttributeReference in {@code node}'s fields other than its children. */
    private static void fields(TreeNode<?> node, Set<Long> referenced) {
        Map<Object, Boolean> children = new IdentityHashMap<>();
        scala.collection.Iterator<?> kids = node.children().iterator();
        while (kids.hasNext()) {
            children.put(kids.next(), true);
        }
        scala.collection.Iterator<Object> fields = node.productIterator();
        while (fields.hasNext()) {
            Object field = fields.next();
            if (!children.containsKey(field) && !allChildren(field, children)) {
                attributes(field, referenced);
            }
        }
    }

    /**
     * The ids of every AttributeReference in {@code value}: a tree node's children and other fields
     * (a CASE's branches are its children, in pairs in its fields), a collection, an option, a tuple.
     */
    private static void attributes(Object value, Set<Long> referenced) {
        if (value instanceof AttributeReference a) {
            referenced.add(a.exprId().id());
        } else if (value instanceof TreeNode<?> node) {
            scala.collection.Iterator<?> kids = node.children().iterator();
            while (kids.hasNext()) {
                attributes(kids.next(), referenced);
            }
            fields(node, referenced);
        } else if (value instanceof scala.collection.Iterable<?> items) {
            scala.collection.Iterator<?> it = items.iterator();
            while (it.hasNext()) {
                attributes(it.next(), referenced);
            }
        } else if (value instanceof scala.Product2<?, ?> pair) {
            attributes(pair._1(), referenced);
            attributes(pair._2(), referenced);
        } else if (value instanceof scala.Option<?> option && option.isDefined()) {
            attributes(option.get(), referenced);
        }
    }

    /** {@code e} as the tree pushdown.py turns into a Paimon predicate. */
    private static Map<String, Object> expression(Expression e) throws JsonProcessingException {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("class", e.getClass().getName());
        if (e instanceof AttributeReference a) {
            out.put("exprId", Map.of("id", a.exprId().id()));
            out.put("name", a.name());
        } else if (e instanceof Literal l) {
            Object value = l.value();
            out.put("value", value == null ? null : value.toString());  // a date: its days since 1970
            out.put("dataType", JSON.readTree(l.dataType().json()));
        }
        List<Object> children = new ArrayList<>();
        scala.collection.Iterator<Expression> it = e.children().iterator();
        while (it.hasNext()) {
            children.add(expression(it.next()));
        }
        out.put("_children", children);
        return out;
    }
}

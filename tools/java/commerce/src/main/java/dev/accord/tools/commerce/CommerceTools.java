package dev.accord.tools.commerce;

import dev.accord.contract.AccordError;
import dev.accord.contract.auth.Principal;
import dev.accord.contract.generated.ErrorCode;
import dev.accord.contract.mcp.ToolResults;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.server.McpStatelessServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * orders.lookup, customers.history and orders.customer_history, answered as
 * tools/accord/tools/commerce.py answers them: for the customer and app the server verified
 * (never just the argument), another customer's order NOT_FOUND exactly like no order, and the
 * refund figures read from the payments ledger at the time of the call.
 */
final class CommerceTools {
    /** The window of customers.history and of the risk rule (accord.tools.approval_rule). */
    static final int HISTORY_DAYS = 90;
    static final String PRINCIPAL = "accord.principal";
    private static final Logger LOG = Logger.getLogger(CommerceTools.class.getName());

    interface Handler {
        Map<String, Object> answer(Map<String, Object> args, Access.Verified who);
    }

    private final DemoData data;
    private final Ledger ledger;
    private final Access access;

    CommerceTools(DemoData data, Ledger ledger, Access access) {
        this.data = data;
        this.ledger = ledger;
        this.access = access;
    }

    List<SyncToolSpecification> specifications(List<ToolContract> contracts) {
        List<SyncToolSpecification> specs = new ArrayList<>();
        for (ToolContract c : contracts) {
            Handler handler = switch (c.name()) {
                case "orders.lookup" -> this::ordersLookup;
                case "customers.history" -> (args, who) -> history(who, null);
                case "orders.customer_history" -> this::ordersCustomerHistory;
                default -> throw new IllegalArgumentException("no handler for " + c.name());
            };
            specs.add(new SyncToolSpecification(c.tool(), (ctx, request) -> call(c, handler, ctx, request)));
        }
        return specs;
    }

    private CallToolResult call(ToolContract contract, Handler handler, McpTransportContext ctx,
            CallToolRequest request) {
        try {
            Principal principal = (Principal) ctx.get(PRINCIPAL);
            if (principal == null) {  // the HTTP filter lets nothing through without one
                throw new AccordError(ErrorCode.UNAUTHENTICATED);
            }
            Map<String, Object> args = request.arguments() == null ? Map.of() : request.arguments();
            Access.Verified who = access.authorize(contract, principal, args, request.meta());
            return ToolResults.ok(handler.answer(args, who));
        } catch (AccordError e) {
            return ToolResults.error(e);
        } catch (RuntimeException e) {  // a bug: logged here, never its text on the wire
            LOG.log(Level.SEVERE, contract.name() + " failed", e);
            return ToolResults.error(new AccordError(ErrorCode.INTERNAL));
        }
    }

    /** The delegation commerce sends payments: its caller's tenant when it is the verified one. */
    private static Map<String, Object> actingFor(Access.Verified who) {
        Map<String, Object> tenant = who.tenant();
        if (tenant != null && who.app().equals(tenant.get("app")) && who.customerId().equals(tenant.get("user"))) {
            return tenant;
        }
        return Map.of("app", who.app(), "user", who.customerId(), "session", Ledger.SESSION);
    }

    /** An order of the verified customer in the verified app; another's reads as none. */
    private DemoData.Order owned(String orderId, Access.Verified who) {
        DemoData.Order order = data.app.equals(who.app()) ? data.orders.get(orderId) : null;
        if (order == null || !order.customerId().equals(who.customerId())) {
            throw new AccordError(ErrorCode.NOT_FOUND, "no order " + orderId + " for this customer");
        }
        return order;
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> ordersLookup(Map<String, Object> args, Access.Verified who) {
        String orderId = (String) args.get("order_id");
        DemoData.Order order = owned(orderId, who);  // NOT_FOUND before payments is asked
        Map<String, Object> paidBack = ledger.refunds(actingFor(who), who.customerId(), orderId, null);
        Instant now = Instant.now();
        List<Map<String, Object>> items = new ArrayList<>();
        long total = 0;
        boolean finalSale = false;
        for (DemoData.Item i : order.items()) {
            Map<String, Object> item = new LinkedHashMap<>();
            item.put("sku", i.sku());
            item.put("name", i.name());
            item.put("quantity", i.quantity());
            item.put("unit_price_cents", i.unitPriceCents());
            item.put("category", i.category());
            item.put("final_sale", i.finalSale());
            items.add(item);
            total += (long) i.quantity() * i.unitPriceCents();
            finalSale |= i.finalSale();
        }
        long refunded = ((Number) paidBack.get("total_cents")).longValue();
        List<Map<String, Object>> refunds = new ArrayList<>();
        for (Map<String, Object> r : (List<Map<String, Object>>) paidBack.get("refunds")) {
            Map<String, Object> one = new LinkedHashMap<>();
            for (String k : List.of("receipt_id", "amount_cents", "created_at")) {
                one.put(k, r.get(k));
            }
            refunds.add(one);
        }
        Instant delivered = order.deliveredAt();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("order_id", order.orderId());
        out.put("customer_id", order.customerId());
        out.put("status", order.status());
        out.put("currency", order.currency());
        out.put("total_cents", total);
        out.put("refunded_cents", refunded);
        out.put("refundable_cents", Math.max(0, total - refunded));
        out.put("ordered_at", iso(order.orderedAt()));
        out.put("delivered_at", delivered == null ? null : iso(delivered));
        out.put("days_since_delivery", delivered == null ? null : Math.max(0, Duration.between(delivered, now).toDays()));
        out.put("final_sale", finalSale);
        out.put("items", items);
        out.put("refunds", refunds);
        return out;
    }

    private Map<String, Object> ordersCustomerHistory(Map<String, Object> args, Access.Verified who) {
        String orderId = (String) args.get("order_id");
        owned(orderId, who);  // the history is given only for the customer's own order
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("order_id", orderId);
        out.putAll(history(who, orderId));
        return out;
    }

    /** customers.history: commerce's counts, and the ledger's refunds of the last 90 days. */
    private Map<String, Object> history(Access.Verified who, String ofOrder) {
        DemoData.Customer customer = data.app.equals(who.app()) ? data.customers.get(who.customerId()) : null;
        if (customer == null) {
            throw new AccordError(ErrorCode.NOT_FOUND, "no customer " + who.customerId());
        }
        Instant now = Instant.now();
        Instant since = DemoData.daysAgo(now, HISTORY_DAYS);
        long total = 0;
        long recent = 0;
        for (DemoData.Order o : data.orders.values()) {
            if (o.customerId().equals(who.customerId())) {
                total++;
                if (!o.orderedAt().isBefore(since)) {
                    recent++;
                }
            }
        }
        Map<String, Object> ledgerSays = ledger.refunds(actingFor(who), who.customerId(), null, HISTORY_DAYS);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("customer_id", who.customerId());
        out.put("account_age_days", Math.max(0, Duration.between(customer.createdAt(), now).toDays()));
        out.put("orders_total", total);
        out.put("orders_90d", recent);
        out.put("chargebacks", customer.chargebacks());
        out.put("refunds_90d", ((Number) ledgerSays.get("count")).longValue());
        out.put("refunded_cents_90d", ((Number) ledgerSays.get("total_cents")).longValue());
        return out;
    }

    /** RFC 3339 UTC with a Z, whole seconds (accord.protocol.storage.types.iso). */
    static String iso(Instant at) {
        return DateTimeFormatter.ISO_INSTANT.format(at.truncatedTo(ChronoUnit.SECONDS));
    }
}

package dev.accord.tools.commerce;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Commerce's customers and orders, from the demo data Python seeds (tools/accord/tools/
 * seed_data.json, bundled in the jar), with dates relative to this process's start (Python's
 * are relative to its database's first start). Every row belongs to the file's tenant app.
 */
final class DemoData {
    record Customer(String customerId, String name, Instant createdAt, int chargebacks) {}

    record Item(String sku, String name, int quantity, int unitPriceCents, String category,
            boolean finalSale) {}

    record Order(String orderId, String customerId, String status, String currency,
            Instant orderedAt, Instant deliveredAt, List<Item> items) {}

    final String app;
    final Map<String, Customer> customers = new LinkedHashMap<>();
    final Map<String, Order> orders = new LinkedHashMap<>();

    private DemoData(String app) {
        this.app = app;
    }

    static DemoData load(Instant now) throws IOException {
        JsonNode data;
        try (InputStream in = DemoData.class.getResourceAsStream("/seed_data.json")) {
            if (in == null) {
                throw new IOException("no seed_data.json in the jar");
            }
            data = new ObjectMapper().readTree(in);
        }
        DemoData found = new DemoData(data.get("app").asText());
        String currency = data.get("currency").asText();
        for (JsonNode c : data.get("customers")) {
            found.customers.put(c.get("customer_id").asText(), new Customer(
                    c.get("customer_id").asText(), c.get("name").asText(),
                    daysAgo(now, c.get("account_age_days").asInt()), c.path("chargebacks").asInt(0)));
        }
        for (JsonNode o : data.get("orders")) {
            List<Item> items = new ArrayList<>();
            for (JsonNode i : o.get("items")) {
                items.add(new Item(i.get("sku").asText(), i.get("name").asText(), i.get("quantity").asInt(),
                        i.get("unit_price_cents").asInt(), i.get("category").asText(),
                        i.path("final_sale").asBoolean(false)));
            }
            JsonNode delivered = o.get("delivered_days_ago");
            found.orders.put(o.get("order_id").asText(), new Order(
                    o.get("order_id").asText(), o.get("customer_id").asText(), o.get("status").asText(),
                    currency, daysAgo(now, o.get("ordered_days_ago").asInt()),
                    delivered == null || delivered.isNull() ? null : daysAgo(now, delivered.asInt()),
                    List.copyOf(items)));
        }
        return found;
    }

    /** As seed.days_ago: whole seconds, ``days`` before ``now``. */
    static Instant daysAgo(Instant now, int days) {
        return now.minus(days, ChronoUnit.DAYS).truncatedTo(ChronoUnit.SECONDS);
    }
}

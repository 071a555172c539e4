/*
 * Apache Paimon's REST catalog test server (RESTCatalogServer, paimon-core 2.0.0's tests jar) over a
 * local directory, for tests/oracles/paimon_rest.py: args <data dir> <warehouse name> <bearer token>.
 * Prints its URL on a line of its own once it listens, then serves until killed. Data tokens stay
 * off (the clients then read and write the table files themselves).
 */
import java.util.HashMap;
import java.util.Map;

import org.apache.paimon.rest.RESTCatalogServer;
import org.apache.paimon.rest.auth.BearTokenAuthProvider;
import org.apache.paimon.rest.responses.ConfigResponse;

public class RestCatalogServerDriver {
    public static void main(String[] args) throws Exception {
        Map<String, String> defaults = new HashMap<>();
        defaults.put("prefix", "paimon");
        defaults.put("data-token.enabled", "false");
        RESTCatalogServer server = new RESTCatalogServer(args[0], new BearTokenAuthProvider(args[2]),
                new ConfigResponse(defaults, new HashMap<>()), args[1]);
        server.start();
        System.out.println("serving " + server.getUrl());
        System.out.flush();
        Thread.currentThread().join();
    }
}

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * The compat suite's pgjdbc driver: runs every JDBC check through one connection and prints one
 * JSON line per step: {"step": ..., "ok": true, "rows": [...]} or {"step": ..., "ok": false,
 * "sqlState": ..., "error": ...}. A failed step does not stop the later ones.
 *
 * Usage: java -cp <dir>:/usr/share/java/postgresql.jar JdbcCompat host port database user password
 */
public final class JdbcCompat {
  private interface Step {
    List<List<Object>> run(Connection c) throws SQLException;
  }

  public static void main(String[] args) throws Exception {
    String url = "jdbc:postgresql://" + args[0] + ":" + args[1] + "/" + args[2] + "?sslmode=disable";
    Properties props = new Properties();
    props.setProperty("user", args[3]);
    props.setProperty("password", args[4]);
    props.setProperty("ApplicationName", "palisade-compat-jdbc");
    Connection c;
    try {
      c = DriverManager.getConnection(url, props);
      DatabaseMetaData md = c.getMetaData();
      List<List<Object>> rows = new ArrayList<>();
      rows.add(List.of(md.getDatabaseProductName(), md.getDatabaseProductVersion()));
      emit("connect", rows);
    } catch (SQLException e) {
      emitError("connect", e);
      return;
    }

    step(c, "tables", conn -> {
      ResultSet rs = conn.getMetaData().getTables(null, null, "%", new String[] {"TABLE"});
      List<List<Object>> rows = new ArrayList<>();
      while (rs.next()) rows.add(List.of(rs.getString("TABLE_SCHEM"), rs.getString("TABLE_NAME")));
      return rows;
    });
    step(c, "columns", conn -> {
      ResultSet rs = conn.getMetaData().getColumns(null, "public", "customers", "%");
      List<List<Object>> rows = new ArrayList<>();
      while (rs.next()) {
        rows.add(List.of(rs.getString("COLUMN_NAME"), rs.getString("TYPE_NAME"), rs.getInt("ORDINAL_POSITION")));
      }
      return rows;
    });
    step(c, "schemas", conn -> {
      ResultSet rs = conn.getMetaData().getSchemas();
      List<List<Object>> rows = new ArrayList<>();
      while (rs.next()) rows.add(List.of(rs.getString("TABLE_SCHEM")));
      return rows;
    });
    step(c, "primaryKeys", conn -> {
      ResultSet rs = conn.getMetaData().getPrimaryKeys(null, "public", "customers");
      List<List<Object>> rows = new ArrayList<>();
      while (rs.next()) rows.add(List.of(rs.getString("COLUMN_NAME"), rs.getInt("KEY_SEQ")));
      return rows;
    });
    // Six executions: pgjdbc switches to a named server-side statement at the fifth
    // (prepareThreshold), so both the unnamed and the named path run.
    step(c, "prepared", conn -> {
      List<List<Object>> first = null;
      try (PreparedStatement ps =
          conn.prepareStatement("SELECT id, name, email FROM customers WHERE id >= ? ORDER BY id")) {
        for (int i = 0; i < 6; i++) {
          ps.setInt(1, 1);
          List<List<Object>> rows = rows(ps.executeQuery());
          if (first == null) first = rows;
          else if (!first.equals(rows)) throw new SQLException("execution " + i + " returned " + rows, "XXXXX");
        }
      }
      return first;
    });
    step(c, "cursor", conn -> {
      conn.setAutoCommit(false);
      try (PreparedStatement ps = conn.prepareStatement("SELECT id, amount FROM orders ORDER BY id")) {
        ps.setFetchSize(1);
        List<List<Object>> rows = rows(ps.executeQuery());
        conn.commit();
        return rows;
      } finally {
        conn.setAutoCommit(true);
      }
    });
    step(c, "deniedColumn", conn -> {
      try (Statement st = conn.createStatement()) {
        return rows(st.executeQuery("SELECT id, ssn FROM customers"));
      }
    });
    step(c, "hiddenTable", conn -> {
      try (Statement st = conn.createStatement()) {
        return rows(st.executeQuery("SELECT * FROM secrets"));
      }
    });
    c.close();
  }

  private static void step(Connection c, String name, Step s) {
    try {
      emit(name, s.run(c));
    } catch (SQLException e) {
      emitError(name, e);
      try {
        if (!c.getAutoCommit()) c.rollback();
      } catch (SQLException ignored) {
        // the next step reports its own error
      }
    }
  }

  private static List<List<Object>> rows(ResultSet rs) throws SQLException {
    ResultSetMetaData md = rs.getMetaData();
    List<List<Object>> rows = new ArrayList<>();
    while (rs.next()) {
      List<Object> row = new ArrayList<>();
      for (int i = 1; i <= md.getColumnCount(); i++) row.add(rs.getString(i));
      rows.add(row);
    }
    return rows;
  }

  private static void emit(String step, List<List<Object>> rows) {
    StringBuilder sb = new StringBuilder("{\"step\":").append(json(step)).append(",\"ok\":true,\"rows\":[");
    for (int i = 0; i < rows.size(); i++) {
      if (i > 0) sb.append(',');
      sb.append('[');
      List<Object> row = rows.get(i);
      for (int j = 0; j < row.size(); j++) {
        if (j > 0) sb.append(',');
        Object v = row.get(j);
        sb.append(v == null ? "null" : v instanceof Number ? v.toString() : json(v.toString()));
      }
      sb.append(']');
    }
    System.out.println(sb.append("]}"));
  }

  private static void emitError(String step, SQLException e) {
    System.out.println("{\"step\":" + json(step) + ",\"ok\":false,\"sqlState\":" + json(String.valueOf(e.getSQLState()))
        + ",\"error\":" + json(String.valueOf(e.getMessage())) + "}");
  }

  private static String json(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (char ch : s.toCharArray()) {
      if (ch == '"' || ch == '\\') sb.append('\\').append(ch);
      else if (ch < 0x20) sb.append(String.format("\\u%04x", (int) ch));
      else sb.append(ch);
    }
    return sb.append('"').toString();
  }
}

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Properties;

/**
 * The token-login check for pgjdbc (docs/sso.md): connects with an identity provider's token as
 * the password and counts the rows it may see, then tries a refused token. Prints one line per
 * attempt: "ok <count>" or "error <SQLSTATE>". The tokens come from the environment
 * (PALISADE_TOKEN, PALISADE_REFUSED_TOKEN), not the command line.
 *
 * Usage: java -cp /usr/share/java/postgresql.jar JdbcTokenLogin.java host port database user
 */
public final class JdbcTokenLogin {
  public static void main(String[] args) {
    String url = "jdbc:postgresql://" + args[0] + ":" + args[1] + "/" + args[2] + "?sslmode=disable";
    attempt(url, args[3], System.getenv("PALISADE_TOKEN"));
    attempt(url, args[3], System.getenv("PALISADE_REFUSED_TOKEN"));
  }

  private static void attempt(String url, String user, String token) {
    Properties props = new Properties();
    props.setProperty("user", user);
    props.setProperty("password", token);
    props.setProperty("ApplicationName", "palisade-token-jdbc");
    try (Connection c = DriverManager.getConnection(url, props);
        ResultSet rs = c.createStatement().executeQuery("SELECT count(*) FROM orders")) {
      rs.next();
      System.out.println("ok " + rs.getLong(1));
    } catch (SQLException e) {
      System.out.println("error " + e.getSQLState());
    }
  }
}

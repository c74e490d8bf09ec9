// Hello is the java driver's test program: hello.jar runs it (its
// Main-Class), and so does class "Hello" with class_path "hello.jar".
// Built with a JDK by ./build.sh; the class file targets Java 8, so that
// any later JVM runs it.
//
// It prints its arguments, who and where it runs, the largest heap the
// JVM chose, and whether the paths after "exists" are there, then exits with the code after "exit", or
// sleeps until it is signalled with "sleep" (printing "stopping" from its
// shutdown hook on SIGTERM).
import java.io.File;

public class Hello extends Thread {
    // The shutdown hook (one class: the jar holds Hello.class alone).
    public void run() {
        System.out.println("stopping");
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        StringBuilder all = new StringBuilder();
        for (String a : args) {
            all.append(' ').append(a);
        }
        System.out.println("hello from java" + all);
        System.out.println("user.name=" + System.getProperty("user.name"));
        System.out.println("user.dir=" + System.getProperty("user.dir"));
        System.out.println("pid=" + new File("/proc/self").getCanonicalFile().getName());
        System.out.println("task_dir=" + System.getenv("NOMAD_TASK_DIR"));
        System.out.println("max_heap_mb=" + Runtime.getRuntime().maxMemory() / (1024 * 1024));
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals("exists")) {
                System.out.println("exists " + args[i + 1] + "=" + new File(args[i + 1]).exists());
            }
        }
        Runtime.getRuntime().addShutdownHook(new Hello());
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals("exit")) {
                System.out.flush();
                System.exit(Integer.parseInt(args[i + 1]));
            }
            if (args[i].equals("sleep")) {
                System.out.println("started");
                System.out.flush();
                Thread.sleep(Long.parseLong(args[i + 1]) * 1000);
            }
        }
    }
}
